"""The edit strategy's command-line options, and a new run's options from those given."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from embedding_ttc.search.prompts import DEFAULT_EDIT_CONTEXT_TOKENS
from embedding_ttc.search.strategies.base import CONTEXT_TOKENS, PRECHECK, REPAIR_ROUNDS, Flag
from embedding_ttc.search.strategies.edit.options import EDIT_REPAIR_ROUNDS, EditOptions

FLAGS: tuple[Flag, ...] = (
    REPAIR_ROUNDS,
    CONTEXT_TOKENS,
    PRECHECK,
    Flag(
        "--edit-ideas",
        "ideas",
        "switch",
        "--strategy edit: name in each prompt one idea the parent lacks, to add as a channel "
        "(default on; --no-edit-ideas leaves the change to the model)",
    ),
)
"""What ``--strategy edit`` reads."""


def from_flags(given: Mapping[str, Any], backend: str | None) -> EditOptions:
    """A new run's edit options: those given, the defaults for the rest (ideas on).

    Raises:
        StrategyError: an option out of its range.

    """
    return EditOptions(
        repair_rounds=given.get("repair_rounds", EDIT_REPAIR_ROUNDS),
        context_tokens=given.get("context_tokens") or DEFAULT_EDIT_CONTEXT_TOKENS,
        precheck=given.get("precheck") is not False,
        ideas=given.get("ideas") is not False,
    )
