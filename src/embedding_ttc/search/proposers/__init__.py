"""Proposers: who writes the next program (an LLM behind an API, a local model, or no LLM).

Every backend implements :class:`~embedding_ttc.search.proposers.base.Proposer` and is built
by name through :func:`~embedding_ttc.search.proposers.catalog.make_proposer`.
"""

from embedding_ttc.search.proposers.base import (
    Proposer,
    ProposerConfigError,
    ProposerError,
)
from embedding_ttc.search.proposers.catalog import PROPOSERS, make_proposer

__all__ = ["PROPOSERS", "Proposer", "ProposerConfigError", "ProposerError", "make_proposer"]
