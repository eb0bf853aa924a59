"""The draft strategy: the model writes a whole program per generation.

With one draft, no repair, the full prompt and no pre-check (:data:`API_DEFAULTS`, what an API
model does unless asked otherwise) it is the single draft
(:class:`~embedding_ttc.search.drafting.single.SingleDraftProposer`: one request, its reply
parsed). With any aid (more drafts, repair turns, the compact prompt, the pre-check) it is the
:class:`~embedding_ttc.search.drafting.proposer.DraftingProposer`. A local model
(``llama-cpp``) drafts with every aid by default (:data:`LOCAL_DEFAULTS`), because a 1.5B
model writes a runnable program only now and then (measured in the README). The command line
only reads these defaults.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.search.prompts import DEFAULT_CONTEXT_TOKENS, PromptStyle
from embedding_ttc.search.strategies.base import (
    STRICT,
    Collaborators,
    Strategy,
    proposer_label,
    register,
)

if TYPE_CHECKING:
    from embedding_ttc.search.backends.base import ChatBackend
    from embedding_ttc.search.proposer import Proposer


@dataclass(frozen=True)
class DraftingDefaults:
    """What a backend does when no drafting option is given."""

    drafts: int
    repair_rounds: int
    prompt: PromptStyle


LOCAL_DEFAULTS = DraftingDefaults(drafts=3, repair_rounds=1, prompt="compact")
"""The defaults of a local model: every aid of the drafting proposer."""

API_DEFAULTS = DraftingDefaults(drafts=1, repair_rounds=0, prompt="full")
"""The defaults of an API model: one draft of the full prompt, no repair (the single draft)."""

LOCAL_BACKENDS: frozenset[str] = frozenset({"llama-cpp"})
"""Backends that draft with :data:`LOCAL_DEFAULTS`."""


@dataclass(frozen=True)
class DraftOptions:
    """How the model drafts; the defaults are the single draft (one request, no aid).

    Attributes:
        drafts: drafts per generation, the first that passes the pre-check wins.
        repair_rounds: repair turns per failed draft.
        prompt: ``full`` or ``compact``.
        context_tokens: the compact prompt's budget.
        precheck: check each draft before the evaluation (and repair its imports first).

    """

    __pydantic_config__ = STRICT

    drafts: int = 1
    repair_rounds: int = 0
    prompt: PromptStyle = "full"
    context_tokens: int = DEFAULT_CONTEXT_TOKENS
    precheck: bool = False

    @property
    def single(self) -> bool:
        """No aid asked: one draft of the full prompt, no repair, no pre-check."""
        return (
            self.drafts == 1
            and self.repair_rounds == 0
            and self.prompt == "full"
            and not self.precheck
        )


def build(backend: ChatBackend | None, options: DraftOptions, given: Collaborators) -> Proposer:
    """The single draft, or the drafting proposer when an aid is asked for."""
    from embedding_ttc.search.drafting.proposer import DraftingProposer
    from embedding_ttc.search.drafting.single import SingleDraftProposer

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


STRATEGY = register(Strategy("draft", DraftOptions, "chat", build))


def defaults_for(backend: str) -> DraftingDefaults:
    """The drafting defaults of the backend registered as ``backend``."""
    return LOCAL_DEFAULTS if backend in LOCAL_BACKENDS else API_DEFAULTS


def resolve_drafting(
    proposer: str,
    *,
    drafts: int | None,
    repair_rounds: int | None,
    prompt: PromptStyle | None,
    context_tokens: int,
    precheck: bool | None,
) -> DraftOptions:
    """The draft options from the command line's, defaults resolved for ``proposer``.

    Drafting aids are on when it drafts more than once, repairs, uses the compact prompt or is
    asked for the pre-check; otherwise the options are the single draft's (``DraftOptions()``).
    ``None`` for an option means its default.

    Raises:
        EmbeddingTTCError: drafting asked of the structural proposer, or an option out of range.

    """
    defaults = defaults_for(proposer)
    drafts = drafts if drafts is not None else defaults.drafts
    repairs = repair_rounds if repair_rounds is not None else defaults.repair_rounds
    style: PromptStyle = prompt or defaults.prompt
    active = drafts > 1 or repairs > 0 or style == "compact" or precheck is True
    if not active:
        return DraftOptions()
    if proposer == "structural":
        raise EmbeddingTTCError(
            "--drafts, --repair-rounds, --prompt and --precheck need an LLM proposer "
            "(openai, anthropic or llama-cpp), not structural"
        )
    if drafts < 1 or repairs < 0:
        raise EmbeddingTTCError("--drafts must be at least 1 and --repair-rounds at least 0")
    return DraftOptions(
        drafts=drafts,
        repair_rounds=repairs,
        prompt=style,
        context_tokens=context_tokens,
        precheck=precheck is not False,
    )
