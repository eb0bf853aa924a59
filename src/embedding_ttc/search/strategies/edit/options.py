"""The edit strategy's options record."""

from __future__ import annotations

from dataclasses import dataclass

from embedding_ttc.search.population import EXPLORE
from embedding_ttc.search.prompts import DEFAULT_EDIT_CONTEXT_TOKENS
from embedding_ttc.search.strategies.base import STRICT, Ranged, ranged

EDIT_REPAIR_ROUNDS = 1
"""Repair turns of an edit (and of a guided choice) by default: one repair turn."""


@dataclass(frozen=True)
class EditOptions(Ranged):
    """How the edit proposer runs; the defaults are a new run's.

    Attributes:
        repair_rounds: repair turns after a failed application or pre-check (at least 0).
        explore: probability of a parent off the frontier (0 to 1).
        context_tokens: the edit prompt's budget (at least 1).
        precheck: pre-check each edited program (else it only has to parse).
        ideas: name one idea the parent lacks in each prompt.

    """

    __pydantic_config__ = STRICT

    repair_rounds: int = ranged(EDIT_REPAIR_ROUNDS, low=0)
    explore: float = ranged(EXPLORE, low=0.0, high=1.0)
    context_tokens: int = ranged(DEFAULT_EDIT_CONTEXT_TOKENS, low=1)
    precheck: bool = True
    ideas: bool = True
