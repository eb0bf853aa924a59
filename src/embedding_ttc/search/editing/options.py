"""How a search edits: the settings of the proposers that start from one parent.

``--llm-mode edit`` turns an LLM backend into an
:class:`~embedding_ttc.search.editing.proposer.EditProposer` (the model edits the parent's
source), ``--llm-mode guided`` into a
:class:`~embedding_ttc.search.guided.proposer.GuidedStructuralProposer` (the model chooses the
parent genome's next edit), instead of the drafting proposer. The settings are recorded in the
run's configuration, so a resumed run goes on as it began.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.search.editing.parents import EXPLORE
from embedding_ttc.search.prompts import DEFAULT_EDIT_CONTEXT_TOKENS

if TYPE_CHECKING:  # the pre-check imports the evaluator; the command line's parser need not
    from embedding_ttc.search.drafting.proposer import Precheck
    from embedding_ttc.search.editing.proposer import EditProposer
    from embedding_ttc.search.guided.proposer import GuidedStructuralProposer
    from embedding_ttc.search.proposers.base import ChatBackend

LlmMode = Literal["draft", "edit", "guided"]
"""How an LLM proposer writes a program: drafts it whole, edits a parent's source, or chooses
a parent genome's edit for the structural renderer."""

LLM_MODES: tuple[LlmMode, ...] = ("draft", "edit", "guided")

EDIT_REPAIR_ROUNDS = 1
"""Repair turns of an edit by default (the issue's "one repair turn")."""

GUIDED_OFFERS = 8
"""Open edits a new guided run offers per generation: as many as there are kinds of edit
(add, drop or swap a channel, change a normalisation or the fusion, add or drop a round,
change the refinement), so each kind the parent allows is on offer."""


@dataclass(frozen=True)
class EditOptions:
    """How the edit or guided proposer runs (``mode``), and its settings.

    ``context_tokens``, ``precheck`` and ``ideas`` are the edit proposer's (the guided
    proposer's programs are written by the structural renderer, valid by construction).
    ``ideas`` (:mod:`.suggest`) is off in a configuration recorded before it existed, as those
    runs ran; :func:`resolve_editing` turns it on for a new run unless asked not to.
    ``offers`` is the guided proposer's sample of open edits per generation (``0``: every open
    edit, as runs recorded before it existed ran); :func:`resolve_editing` sets
    :data:`GUIDED_OFFERS` for a new guided run unless asked otherwise. ``keep`` names the
    channels the guided proposer never drops or swaps out (empty, as runs recorded before it
    existed ran, unless asked). ``share``: the guided proposer's reply also sets the convex
    fusion's share (off, as runs recorded before it existed ran; :func:`resolve_editing` turns
    it on for a new guided run unless asked not to).
    """

    mode: Literal["edit", "guided"] = "edit"
    repair_rounds: int = EDIT_REPAIR_ROUNDS
    explore: float = EXPLORE
    context_tokens: int = DEFAULT_EDIT_CONTEXT_TOKENS
    precheck: bool = True
    ideas: bool = False
    offers: int = 0
    keep: tuple[str, ...] = ()
    share: bool = False

    def wrap(
        self, inner: ChatBackend, precheck: Precheck, seed: int, reference: str | None = None
    ) -> EditProposer | GuidedStructuralProposer:
        """The proposer around ``inner``, with ``precheck`` when the edit options use one.

        The edit proposer starts from the run's ``reference`` program while the frontier
        holds only P0, when the reference has a search-program form (:mod:`.seeds`).

        Raises:
            EmbeddingTTCError: guided mode over a backend that cannot constrain JSON.

        """
        from embedding_ttc.search.editing.proposer import EditProposer
        from embedding_ttc.search.editing.seeds import seeds_for
        from embedding_ttc.search.guided.proposer import GuidedStructuralProposer
        from embedding_ttc.search.proposers.base import JsonChatBackend

        if self.mode == "guided":
            if not isinstance(inner, JsonChatBackend):
                raise EmbeddingTTCError(
                    f"--llm-mode guided needs a backend that constrains JSON (llama-cpp or "
                    f"openai), not {inner.name}"
                )
            return GuidedStructuralProposer(
                inner,
                explore=self.explore,
                repair_rounds=self.repair_rounds,
                seed=seed,
                offers=self.offers,
                keep=self.keep,
                share=self.share,
            )
        return EditProposer(
            inner,
            explore=self.explore,
            repair_rounds=self.repair_rounds,
            precheck=precheck if self.precheck else None,
            context_tokens=self.context_tokens,
            seed=seed,
            seeds=seeds_for(reference),
            suggest=self.ideas,
        )


def resolve_editing(
    proposer: str,
    mode: LlmMode,
    *,
    repair_rounds: int | None,
    context_tokens: int | None,
    precheck: bool | None,
    ideas: bool = True,
    offers: int | None = None,
    keep: Sequence[str] = (),
    share: bool | None = None,
) -> EditOptions | None:
    """The edit settings for ``mode``, or ``None`` when the run drafts.

    Raises:
        EmbeddingTTCError: an unknown mode, editing asked of the structural proposer, or an
            option out of range.

    """
    if mode not in LLM_MODES:
        raise EmbeddingTTCError(f"unknown --llm-mode {mode!r}; choose from {', '.join(LLM_MODES)}")
    if mode == "draft":
        return None
    if proposer == "structural":
        raise EmbeddingTTCError(
            "--llm-mode edit needs an LLM proposer (openai, anthropic or llama-cpp), not structural"
        )
    repairs = EDIT_REPAIR_ROUNDS if repair_rounds is None else repair_rounds
    if repairs < 0:
        raise EmbeddingTTCError("--repair-rounds must be at least 0")
    if offers is not None and mode != "guided":
        raise EmbeddingTTCError(f"--guided-offers is --llm-mode guided's option, not {mode}'s")
    if offers is not None and offers < 0:
        raise EmbeddingTTCError("--guided-offers must be at least 0 (0: every open edit)")
    if keep and mode != "guided":
        raise EmbeddingTTCError(f"--guided-keep is --llm-mode guided's option, not {mode}'s")
    if share is not None and mode != "guided":
        raise EmbeddingTTCError(f"--guided-share is --llm-mode guided's option, not {mode}'s")
    _check_channels(keep)
    return EditOptions(
        mode=mode,
        repair_rounds=repairs,
        context_tokens=context_tokens or DEFAULT_EDIT_CONTEXT_TOKENS,
        precheck=precheck is not False,
        ideas=ideas and mode == "edit",
        offers=(GUIDED_OFFERS if offers is None else offers) if mode == "guided" else 0,
        keep=tuple(dict.fromkeys(keep)),
        share=(share is not False) if mode == "guided" else False,
    )


def _check_channels(names: Sequence[str]) -> None:
    """Raise naming each of ``names`` that is not a structural channel, with close names."""
    from embedding_ttc.registry import closest
    from embedding_ttc.search.proposers.structural.channels import CHANNELS

    for name in names:
        if name not in CHANNELS:
            near = closest(name, list(CHANNELS))
            hint = f"; did you mean {' or '.join(near)}?" if near else ""
            raise EmbeddingTTCError(
                f"--guided-keep {name!r} is not a channel{hint} (channels: {', '.join(CHANNELS)})"
            )
