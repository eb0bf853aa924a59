"""The edit strategy's factory: the edit proposer over a chat backend."""

from __future__ import annotations

from typing import TYPE_CHECKING

from embedding_ttc.search.strategies.base import Collaborators, proposer_label
from embedding_ttc.search.strategies.edit.options import EditOptions

if TYPE_CHECKING:
    from embedding_ttc.search.backends.base import ChatBackend
    from embedding_ttc.search.proposer import Proposer


def build(backend: ChatBackend | None, options: EditOptions, given: Collaborators) -> Proposer:
    """The edit proposer around ``backend``, with the run's pre-check when the options use one.

    It starts from the run's reference program while the frontier holds only P0, when the
    reference has a search-program form (:mod:`~.seeds`).
    """
    from embedding_ttc.search.strategies.edit.proposer import EditProposer
    from embedding_ttc.search.strategies.edit.seeds import seeds_for

    assert backend is not None  # build_proposer checked the pair (needs="chat")
    return EditProposer(
        backend,
        explore=options.explore,
        repair_rounds=options.repair_rounds,
        precheck=given.precheck if options.precheck else None,
        context_tokens=options.context_tokens,
        seed=given.seed,
        seeds=seeds_for(given.reference),
        suggest=options.ideas,
        name=proposer_label("edit", backend.name),
    )
