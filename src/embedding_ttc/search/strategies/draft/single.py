"""The single draft: one request with the full prompt per generation, its reply parsed.

What an API model does when no drafting aid is asked for (one draft, no repair, no
pre-check): :class:`SingleDraftProposer` renders the full prompt
(:func:`~embedding_ttc.search.prompts.full.render_prompt`), asks its chat backend once with the
seed ``seed + generation``, and turns the reply into a proposal
(:func:`~embedding_ttc.search.proposer.proposal_from_reply`). With any aid, the draft strategy
builds the :class:`~embedding_ttc.search.strategies.draft.proposer.DraftingProposer` instead.
"""

from __future__ import annotations

from embedding_ttc.search.backends.base import ChatBackend
from embedding_ttc.search.conversation import program_block_done
from embedding_ttc.search.prompts.full import render_prompt
from embedding_ttc.search.proposer import base_seed, proposal_from_reply
from embedding_ttc.search.state import Proposal, SearchState


class SingleDraftProposer:
    """One full-prompt request per generation to a chat backend.

    Args:
        inner: the chat backend that answers.
        top_k: frontier programs shown with their source; ``None`` shows every program of
            ``state.frontier`` (the loop already chose how many).
        name: what the ledger records as the proposer (default ``draft:<backend>``).

    """

    def __init__(self, inner: ChatBackend, *, top_k: int | None = None, name: str = "") -> None:
        self.inner = inner
        self.top_k = top_k
        self.name = name or f"draft:{inner.name}"

    def propose(self, state: SearchState) -> Proposal:
        """Render the prompt, ask the model once, and parse its reply.

        Raises:
            ProposerError: when no usable reply could be obtained.

        """
        shown = len(state.frontier) if self.top_k is None else self.top_k
        prompt = render_prompt(state, top_k=shown)
        seed = base_seed(self.inner, state) + state.generation
        reply = self.inner.chat(
            [{"role": "user", "content": prompt}], seed=seed, stop=program_block_done
        )
        return proposal_from_reply(reply.text, usage=reply.usage, proposer=self.name, state=state)
