"""The structural strategy: compose and mutate genomes of primitives, with no language model.

The proposer is :class:`~embedding_ttc.search.structural.proposer.StructuralProposer`; it has
no options and takes no backend.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from embedding_ttc.search.strategies.base import STRICT, Collaborators, Strategy, register

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


STRATEGY = register(Strategy("structural", StructuralOptions, "none", build))
