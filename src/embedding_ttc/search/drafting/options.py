"""How a search drafts: the drafting proposer's defaults per backend, resolved from options.

A local model (``llama-cpp``) drafts by default: :data:`LOCAL_DEFAULTS` (three drafts, one
repair round, the compact prompt) and the pre-check, because a 1.5B model writes a runnable
program only now and then (measured in the README). An API model is used as is
(:data:`API_DEFAULTS`), unless an option asks for drafting. The structural proposer has no
chat seam and never drafts. The command line only reads these defaults.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.search.prompts import PromptStyle

if TYPE_CHECKING:  # the proposer imports the evaluator; the command line's parser need not
    from embedding_ttc.search.drafting.proposer import DraftingProposer, Precheck
    from embedding_ttc.search.proposers.base import ChatBackend


@dataclass(frozen=True)
class DraftingDefaults:
    """What a backend does when no drafting option is given."""

    drafts: int
    repair_rounds: int
    prompt: PromptStyle


LOCAL_DEFAULTS = DraftingDefaults(drafts=3, repair_rounds=1, prompt="compact")
"""The defaults of a local model: every aid of the drafting proposer."""

API_DEFAULTS = DraftingDefaults(drafts=1, repair_rounds=0, prompt="full")
"""The defaults of an API model: one draft of the full prompt, no repair (no drafting)."""

LOCAL_PROPOSERS: frozenset[str] = frozenset({"llama-cpp"})
"""Proposers that draft with :data:`LOCAL_DEFAULTS`."""


@dataclass(frozen=True)
class DraftingOptions:
    """How the LLM proposer drafts (see :mod:`embedding_ttc.search.drafting.proposer`)."""

    drafts: int
    repair_rounds: int
    prompt: PromptStyle
    context_tokens: int
    precheck: bool

    def wrap(self, inner: ChatBackend, precheck: Precheck) -> DraftingProposer:
        """A drafting proposer around ``inner``, with ``precheck`` when the options use one."""
        from embedding_ttc.search.drafting.proposer import DraftingProposer

        return DraftingProposer(
            inner,
            drafts=self.drafts,
            repair_rounds=self.repair_rounds,
            precheck=precheck if self.precheck else None,
            prompt=self.prompt,
            context_tokens=self.context_tokens,
            fix_imports=self.precheck,  # the mechanical repair goes with the pre-check
        )


def defaults_for(proposer: str) -> DraftingDefaults:
    """The drafting defaults of the proposer registered as ``proposer``."""
    return LOCAL_DEFAULTS if proposer in LOCAL_PROPOSERS else API_DEFAULTS


def resolve_drafting(
    proposer: str,
    *,
    drafts: int | None,
    repair_rounds: int | None,
    prompt: PromptStyle | None,
    context_tokens: int,
    precheck: bool | None,
) -> DraftingOptions | None:
    """The drafting settings, defaults resolved for ``proposer``, or ``None`` when off.

    Drafting is on when it drafts more than once, repairs, uses the compact prompt or is asked
    for the pre-check; ``None`` for an option means its default.

    Raises:
        EmbeddingTTCError: drafting asked of the structural proposer, or an option out of range.

    """
    defaults = defaults_for(proposer)
    drafts = drafts if drafts is not None else defaults.drafts
    repairs = repair_rounds if repair_rounds is not None else defaults.repair_rounds
    style: PromptStyle = prompt or defaults.prompt
    active = drafts > 1 or repairs > 0 or style == "compact" or precheck is True
    if not active:
        return None
    if proposer == "structural":
        raise EmbeddingTTCError(
            "--drafts, --repair-rounds, --prompt and --precheck need an LLM proposer "
            "(openai, anthropic or llama-cpp), not structural"
        )
    if drafts < 1 or repairs < 0:
        raise EmbeddingTTCError("--drafts must be at least 1 and --repair-rounds at least 0")
    return DraftingOptions(
        drafts=drafts,
        repair_rounds=repairs,
        prompt=style,
        context_tokens=context_tokens,
        precheck=precheck is not False,
    )
