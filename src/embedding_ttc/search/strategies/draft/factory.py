"""The draft strategy's factory: the single draft, or the drafting proposer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from embedding_ttc.search.strategies.base import Collaborators, proposer_label
from embedding_ttc.search.strategies.draft.options import DraftOptions

if TYPE_CHECKING:
    from embedding_ttc.search.backends.base import ChatBackend
    from embedding_ttc.search.proposer import Proposer


def build(backend: ChatBackend | None, options: DraftOptions, given: Collaborators) -> Proposer:
    """The single draft, or the drafting proposer when an aid is asked for."""
    from embedding_ttc.search.strategies.draft.proposer import DraftingProposer
    from embedding_ttc.search.strategies.draft.single import SingleDraftProposer

    assert backend is not None  # build_proposer checked the pair (needs="chat")
    name = proposer_label("draft", backend.name)
    if options.single:
        return SingleDraftProposer(backend, name=name)
    return DraftingProposer(
        backend,
        drafts=options.drafts,
        repair_rounds=options.repair_rounds,
        precheck=given.precheck if options.precheck else None,
        prompt=options.prompt,
        context_tokens=options.context_tokens,
        fix_imports=options.precheck,  # the mechanical repair goes with the pre-check
        name=name,
    )
