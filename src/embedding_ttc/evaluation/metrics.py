"""nDCG@10 exactly as pytrec_eval's ``ndcg_cut_10`` (trec_eval 9), which MTEB reports.

The rules, each checked against pytrec-eval-terrier in the tests:

* Ranking: documents sorted by score, descending; **ties broken by document id, descending**
  (trec_eval sorts on ``(score desc, docno desc)`` with ``strcmp``; Python's ``str`` order is the
  same as byte order on UTF-8): :func:`top_k` and :func:`descending_id_rank`, defined in
  :mod:`embedding_ttc.programs.trec_order` (the programs rank in this order too).
* Gain: the judged grade itself (linear gain, not ``2**g - 1``); a grade of 0 or below and an
  unjudged document give 0.
* Discount: ``1 / log2(rank + 1)`` for ranks 1..10.
* Ideal: the query's judged grades sorted descending, cut at 10 (documents need not be
  retrieved). A query with no positive judgement scores 0.0.
* A query is evaluated only if it has judgements; the task loader keeps only such queries.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

# The ranking order lives below the evaluation, where the programs (BM25's top-k) use it too.
from embedding_ttc.programs.trec_order import descending_id_rank, top_k

__all__ = ["CUTOFF", "descending_id_rank", "grades_of", "ideal_dcg", "ndcg_at_10", "top_k"]

CUTOFF = 10
_DISCOUNT = np.array([1.0 / math.log2(i + 2) for i in range(CUTOFF)])


def ideal_dcg(grades: Sequence[int] | NDArray[np.integer], k: int = CUTOFF) -> float:
    """DCG@k of the ideal ranking of the judged grades."""
    pos = sorted((g for g in grades if g > 0), reverse=True)[:k]
    return float(np.dot(pos, _DISCOUNT[: len(pos)])) if pos else 0.0


def ndcg_at_10(ranked_grades: Sequence[int] | NDArray[np.integer], idcg: float) -> float:
    """nDCG@10 of a ranking given the grades of its first (up to) 10 documents."""
    if idcg <= 0.0:
        return 0.0
    gains = np.maximum(np.asarray(ranked_grades, dtype=np.float64)[:CUTOFF], 0.0)
    return float(np.dot(gains, _DISCOUNT[: gains.shape[0]]) / idcg)


def grades_of(ranked_ids: Sequence[str], judged: Mapping[str, int]) -> list[int]:
    """Grades of ranked documents (0 for unjudged ones)."""
    return [judged.get(d, 0) for d in ranked_ids]
