"""The guided strategy's factory: the guided proposer over a JSON-constraining backend."""

from __future__ import annotations

from typing import TYPE_CHECKING

from embedding_ttc.search.strategies.base import Collaborators, StrategyError, proposer_label
from embedding_ttc.search.strategies.guided.options import GuidedOptions

if TYPE_CHECKING:
    from embedding_ttc.search.backends.base import ChatBackend
    from embedding_ttc.search.proposer import Proposer


def build(backend: ChatBackend | None, options: GuidedOptions, given: Collaborators) -> Proposer:
    """The guided proposer around a JSON-constraining ``backend``."""
    from embedding_ttc.search.backends.base import JsonChatBackend
    from embedding_ttc.search.strategies.guided.proposer import GuidedStructuralProposer

    # build_proposer checked the pair (needs="json"); the check narrows the type.
    if not isinstance(backend, JsonChatBackend):
        raise StrategyError("the guided strategy needs a JSON-constraining backend")
    return GuidedStructuralProposer(
        backend,
        explore=options.explore,
        repair_rounds=options.repair_rounds,
        seed=given.seed,
        offers=options.offers,
        keep=options.keep,
        share=options.share,
        name=proposer_label("guided", backend.name),
    )
