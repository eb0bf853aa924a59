"""What a :class:`~embedding_ttc.deploy.reranker.Reranker` call returns.

A ranking (``(document id, score)`` pairs, best first); every candidate's score per query
(:class:`CandidateScores`, from :meth:`Reranker.score` and :meth:`Reranker.search_scores`); every
document's score when the caller gave texts (:class:`TextScored`). The scores carry the
:class:`~embedding_ttc.deploy.call_stats.CallStats` of the call that made them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.deploy.call_stats import CallStats
from embedding_ttc.deploy.text_documents import TextDocument

Ranking = list[tuple[str, float]]
"""``(document id, score)`` pairs, best first."""


@dataclass(frozen=True)
class CandidateScores:
    """Every candidate's score, per query.

    Attributes:
        candidates: per query, its candidates as index rows (ascending).
        scores: per query, the program's score of each candidate (aligned).
        stats: what the call cost.

    """

    candidates: list[NDArray[np.intp]]
    scores: list[NDArray[np.float32]]
    stats: CallStats = field(default_factory=CallStats)


@dataclass(frozen=True)
class TextScored:
    """Every given document's score for one query, in the order given.

    Attributes:
        documents: the documents, as given.
        scores: the program's score of each (aligned).
        held: whether the index held each (same id and text; a bare text: same text).
        stats: what the call cost (``live_documents``: how many were computed live).

    """

    documents: list[TextDocument]
    scores: NDArray[np.float32]
    held: NDArray[np.bool_]
    stats: CallStats

    @property
    def live(self) -> int:
        """Documents whose index-time work was computed live."""
        return int((~self.held).sum())
