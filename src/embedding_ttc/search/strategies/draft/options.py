"""The draft strategy's options record and its defaults per backend.

With one draft, no repair, the full prompt and no pre-check (:data:`API_DEFAULTS`, what an API
model does unless asked otherwise) it is the single draft (one request, its reply parsed). With
any aid (more drafts, repair turns, the compact prompt, the pre-check) it is the drafting
proposer. A local model (``llama-cpp``) drafts with every aid by default
(:data:`LOCAL_DEFAULTS`), because a 1.5B model writes a runnable program only now and then
(measured in the README).
"""

from __future__ import annotations

from dataclasses import dataclass

from embedding_ttc.search.prompts import DEFAULT_CONTEXT_TOKENS, PromptStyle
from embedding_ttc.search.strategies.base import STRICT, Ranged, ranged


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
class DraftOptions(Ranged):
    """How the model drafts; the defaults are the single draft (one request, no aid).

    Attributes:
        drafts: drafts per generation, the first that passes the pre-check wins (at least 1).
        repair_rounds: repair turns per failed draft (at least 0).
        prompt: ``full`` or ``compact``.
        context_tokens: the compact prompt's budget (at least 1).
        precheck: check each draft before the evaluation (and repair its imports first).

    """

    __pydantic_config__ = STRICT

    drafts: int = ranged(1, low=1)
    repair_rounds: int = ranged(0, low=0)
    prompt: PromptStyle = "full"
    context_tokens: int = ranged(DEFAULT_CONTEXT_TOKENS, low=1)
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


def defaults_for(backend: str | None) -> DraftingDefaults:
    """The drafting defaults of the backend registered as ``backend``."""
    return LOCAL_DEFAULTS if backend in LOCAL_BACKENDS else API_DEFAULTS
