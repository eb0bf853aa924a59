"""The structural strategy: compose and mutate genomes of primitives, with no language model.

The proposer is :class:`~embedding_ttc.search.structural.proposer.StructuralProposer`; it has
no options and takes no backend, and is the command line's strategy when no backend is named.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from embedding_ttc.search.strategies.base import STRICT, Collaborators, Strategy

if TYPE_CHECKING:
    from embedding_ttc.search.backends.base import ChatBackend
    from embedding_ttc.search.proposer import Proposer


@dataclass(frozen=True)
class StructuralOptions:
    """The structural strategy has no options (its record is empty)."""

    __pydantic_config__ = STRICT


def build(
    backend: ChatBackend | None, options: StructuralOptions, given: Collaborators
) -> Proposer:
    """The structural proposer, seeded with the run's seed."""
    from embedding_ttc.search.structural.proposer import StructuralProposer

    return StructuralProposer(seed=given.seed)


def from_flags(given: Mapping[str, Any], backend: str | None) -> StructuralOptions:
    """The options of a new run: none (the strategy has no command-line option)."""
    return StructuralOptions()


STRATEGY = Strategy("structural", StructuralOptions, "none", build, (), from_flags)
