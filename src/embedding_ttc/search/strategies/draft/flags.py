"""The draft strategy's command-line options, and a new run's options from those given."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from embedding_ttc.search.prompts import DEFAULT_CONTEXT_TOKENS, PromptStyle
from embedding_ttc.search.strategies.base import CONTEXT_TOKENS, PRECHECK, REPAIR_ROUNDS, Flag
from embedding_ttc.search.strategies.draft.options import (
    API_DEFAULTS,
    LOCAL_DEFAULTS,
    DraftOptions,
    defaults_for,
)

FLAGS: tuple[Flag, ...] = (
    Flag(
        "--drafts",
        "drafts",
        "int",
        "drafts per generation, the first that passes the pre-check wins "
        f"(default {LOCAL_DEFAULTS.drafts} for llama-cpp, else {API_DEFAULTS.drafts})",
        metavar="N",
    ),
    REPAIR_ROUNDS,
    Flag(
        "--prompt",
        "prompt",
        "choice",
        "the full prompt, or the compact one with helpers, two examples and a directive "
        f"(default {LOCAL_DEFAULTS.prompt} for llama-cpp, else {API_DEFAULTS.prompt})",
        choices=("full", "compact"),
    ),
    CONTEXT_TOKENS,
    PRECHECK,
)
"""What ``--strategy draft`` reads."""


def from_flags(given: Mapping[str, Any], backend: str | None) -> DraftOptions:
    """A new run's draft options: those given, the backend's defaults for the rest.

    Drafting aids are on when it drafts more than once, repairs, uses the compact prompt or is
    asked for the pre-check; otherwise the options are the single draft's (``DraftOptions()``).

    Raises:
        StrategyError: an option out of its range.

    """
    defaults = defaults_for(backend)
    style: PromptStyle = given.get("prompt") or defaults.prompt
    precheck = given.get("precheck")
    asked = DraftOptions(  # checks the ranges, whatever follows
        drafts=given.get("drafts", defaults.drafts),
        repair_rounds=given.get("repair_rounds", defaults.repair_rounds),
        prompt=style,
        context_tokens=given.get("context_tokens") or DEFAULT_CONTEXT_TOKENS,
        precheck=precheck is not False,
    )
    active = asked.drafts > 1 or asked.repair_rounds > 0 or style == "compact" or precheck is True
    return asked if active else DraftOptions()
