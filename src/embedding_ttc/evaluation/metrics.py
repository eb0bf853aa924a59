"""nDCG@10 exactly as pytrec_eval's ``ndcg_cut_10`` (trec_eval 9), which MTEB reports.

The rules, each checked against pytrec-eval-terrier in the tests:

* Ranking: documents sorted by score, descending; **ties broken by document id, descending**
  (trec_eval sorts on ``(score desc, docno desc)`` with ``strcmp``; Python's ``str`` order is the
  same as byte order on UTF-8).
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

CUTOFF = 10
_DISCOUNT = np.array([1.0 / math.log2(i + 2) for i in range(CUTOFF)])


def ideal_dcg(grades: Sequence[int] | NDArray[np.integer], k: int = CUTOFF) -> float:
    """DCG@k of the ideal ranking of the judged grades."""
    pos = sorted((g for g in grades if g > 0), reverse=True)[:k]
    return float(np.dot(pos, _DISCOUNT[: len(pos)])) if pos else 0.0


def top_k(
    scores: NDArray[np.floating], tiebreak: NDArray[np.integer], k: int = CUTOFF
) -> NDArray[np.intp]:
    """Indices of the best ``k`` entries of ``scores`` under trec_eval's order.

    Args:
        scores: one query's scores over its candidates.
        tiebreak: for each candidate, its position in *descending* document-id order (so a
            smaller value wins a tie).
        k: how many to return (fewer if there are fewer candidates).

    Returns:
        Candidate positions, best first.

    """
    n = scores.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.intp)
    k = min(k, n)
    if n > k:
        part = np.argpartition(-scores, k - 1)[:k]
        threshold = scores[part].min()
        # Every candidate tied with the k-th score competes for the last places.
        pool = np.flatnonzero(scores >= threshold)
    else:
        pool = np.arange(n)
    order = np.lexsort((tiebreak[pool], -scores[pool].astype(np.float64)))
    return pool[order[:k]]


def ndcg_at_10(ranked_grades: Sequence[int] | NDArray[np.integer], idcg: float) -> float:
    """nDCG@10 of a ranking given the grades of its first (up to) 10 documents."""
    if idcg <= 0.0:
        return 0.0
    gains = np.maximum(np.asarray(ranked_grades, dtype=np.float64)[:CUTOFF], 0.0)
    return float(np.dot(gains, _DISCOUNT[: gains.shape[0]]) / idcg)


def descending_id_rank(doc_ids: Sequence[str]) -> NDArray[np.int64]:
    """For each document, its position when ids are sorted in descending order."""
    order = sorted(range(len(doc_ids)), key=doc_ids.__getitem__, reverse=True)
    rank = np.empty(len(doc_ids), dtype=np.int64)
    rank[order] = np.arange(len(doc_ids))
    return rank


def grades_of(ranked_ids: Sequence[str], judged: Mapping[str, int]) -> list[int]:
    """Grades of ranked documents (0 for unjudged ones)."""
    return [judged.get(d, 0) for d in ranked_ids]
