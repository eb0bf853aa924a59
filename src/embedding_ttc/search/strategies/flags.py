"""The command line's proposer options resolved into one :class:`ProposerSpec`, in one place.

``--proposer`` names the structural strategy or a chat backend; with a backend,
``--llm-mode`` (``draft``, ``edit``, ``guided``) names the strategy and the other options
(``--drafts``, ``--repair-rounds``, ``--prompt``, ``--context-tokens``, ``--precheck``,
``--edit-ideas``, ``--guided-offers``, ``--guided-keep``, ``--guided-share``) its options,
each refused where it does not apply. A peer that hands its programs over (OpenEvolve) names
itself as ``--proposer``: the external strategy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from embedding_ttc.errors import EmbeddingTTCError, UnknownNameError
from embedding_ttc.registry import closest
from embedding_ttc.runs.config import ProposerSpec
from embedding_ttc.search.backends.catalog import BACKENDS
from embedding_ttc.search.prompts import DEFAULT_CONTEXT_TOKENS, PromptStyle
from embedding_ttc.search.strategies.catalog import get_strategy
from embedding_ttc.search.strategies.draft import resolve_drafting
from embedding_ttc.search.strategies.edit import resolve_edit
from embedding_ttc.search.strategies.guided import resolve_guided

LlmMode = Literal["draft", "edit", "guided"]
"""How an LLM proposer writes a program: drafts it whole, edits a parent's source, or chooses
a parent genome's edit for the structural renderer (the strategy of the same name)."""

LLM_MODES: tuple[LlmMode, ...] = ("draft", "edit", "guided")


@dataclass(frozen=True)
class ProposerFlags:
    """The command line's proposer options as given (``None``: not given)."""

    proposer: str
    llm_mode: str = "draft"
    drafts: int | None = None
    repair_rounds: int | None = None
    prompt: PromptStyle | None = None
    context_tokens: int | None = None
    precheck: bool | None = None
    edit_ideas: bool = True
    guided_offers: int | None = None
    guided_keep: Sequence[str] = field(default_factory=tuple)
    guided_share: bool | None = None


def resolve_spec(flags: ProposerFlags, *, peer: bool = False) -> ProposerSpec:
    """The proposer spec the options name, every default resolved.

    Args:
        flags: the options as given.
        peer: a peer hands the programs over (``--proposer`` is its name, not a backend's).

    Raises:
        EmbeddingTTCError: an option where it does not apply, or out of range.
        UnknownNameError: a ``--proposer`` that is neither ``structural`` nor a backend.

    """
    mode = flags.llm_mode
    if mode not in LLM_MODES:
        raise EmbeddingTTCError(f"unknown --llm-mode {mode!r}; choose from {', '.join(LLM_MODES)}")
    if mode != "draft" and (flags.drafts is not None or flags.prompt is not None):
        raise EmbeddingTTCError(
            f"--drafts and --prompt are drafting options, not --llm-mode {mode}'s"
        )
    name = flags.proposer
    if peer and name != "structural" and name not in BACKENDS:
        return _spec("external", None, {"peer": name})
    if name != "structural" and name not in BACKENDS:
        # The message of a registry of proposers (the names ``--proposer`` takes).
        names = ["structural", *BACKENDS]
        near = closest(name, names)
        hint = f" Did you mean: {', '.join(near)}?" if near else ""
        known = ", ".join(sorted(names))
        raise UnknownNameError(f"unknown proposer {name!r}.{hint} Known: {known}")
    if mode == "draft":
        drafting = resolve_drafting(
            name,
            drafts=flags.drafts,
            repair_rounds=flags.repair_rounds,
            prompt=flags.prompt,
            context_tokens=flags.context_tokens or DEFAULT_CONTEXT_TOKENS,
            precheck=flags.precheck,
        )
        if name == "structural":
            return _spec("structural", None, {})
        return _spec("draft", name, drafting)
    return _editing_spec(flags, mode)


def _editing_spec(flags: ProposerFlags, mode: str) -> ProposerSpec:
    """The edit or guided spec, refusing the other mode's options."""
    if flags.proposer == "structural":
        raise EmbeddingTTCError(
            "--llm-mode edit needs an LLM proposer (openai, anthropic or llama-cpp), not structural"
        )
    if flags.repair_rounds is not None and flags.repair_rounds < 0:
        raise EmbeddingTTCError("--repair-rounds must be at least 0")
    if mode == "edit":
        for given, option in (
            (flags.guided_offers is not None, "--guided-offers"),
            (bool(flags.guided_keep), "--guided-keep"),
            (flags.guided_share is not None, "--guided-share"),
        ):
            if given:
                raise EmbeddingTTCError(f"{option} is --llm-mode guided's option, not {mode}'s")
        edit = resolve_edit(
            repair_rounds=flags.repair_rounds,
            context_tokens=flags.context_tokens,
            precheck=flags.precheck,
            ideas=flags.edit_ideas,
        )
        return _spec("edit", flags.proposer, edit)
    guided = resolve_guided(
        repair_rounds=flags.repair_rounds,
        offers=flags.guided_offers,
        keep=flags.guided_keep,
        share=flags.guided_share,
    )
    return _spec("guided", flags.proposer, guided)


def _spec(strategy: str, backend: str | None, options: Any) -> ProposerSpec:
    """A spec whose options are the strategy's record written as JSON (validated on the way)."""
    chosen = get_strategy(strategy)
    record = chosen.read_options(options) if isinstance(options, dict) else options
    return ProposerSpec(strategy=strategy, backend=backend, options=chosen.write_options(record))
