"""trec_eval's ranking order: score descending, ties broken by document id descending.

trec_eval sorts on ``(score desc, docno desc)`` with ``strcmp``; Python's ``str`` order is the
same as byte order on UTF-8. :func:`descending_id_rank` turns document ids into the tie-break
ranks :func:`top_k` takes. The evaluation's rankings (its metrics module re-exports both), the
deployed first stages and BM25's own top-k (:class:`~embedding_ttc.programs.text.bm25.BM25`)
all rank in this order; it sits here, below the evaluation, so that programs can use it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

DEFAULT_K = 10
"""Entries :func:`top_k` returns unless told: nDCG@10's cutoff."""


def top_k(
    scores: NDArray[np.floating], tiebreak: NDArray[np.integer], k: int = DEFAULT_K
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


def descending_id_rank(doc_ids: Sequence[str]) -> NDArray[np.int64]:
    """For each document, its position when ids are sorted in descending order."""
    order = sorted(range(len(doc_ids)), key=doc_ids.__getitem__, reverse=True)
    rank = np.empty(len(doc_ids), dtype=np.int64)
    rank[order] = np.arange(len(doc_ids))
    return rank
