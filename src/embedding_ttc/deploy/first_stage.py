"""The built-in first stages over an index's segments: each segment searched, merged by score.

Dense: a segment without an ANN index is scored exactly (the queries times its memory-mapped
``D``) and its best ``n`` taken under trec_eval's order (score descending, then descending
document id: :func:`~embedding_ttc.evaluation.metrics.top_k` with the index's tie ranks); a
segment with one (:mod:`.ann`) answers its FAISS top ``n``. The union is cut to the best ``n``
under the same order, so an index whose segments are all exact ranks exactly as the product
over the whole matrix did. ``exact``: every segment scored exactly, its ANN index ignored (the
brute force an ANN index is measured against, and a first stage of its own where recall
matters more than latency).

BM25: each segment's own ``bm25s`` top-k (``BM25.top_k`` of
:mod:`embedding_ttc.programs.primitives.lexical`, exact under the same order within the
segment), merged by score. Each segment's IDF and
average length are its own documents' until the index is compacted, as in the shards of Lucene
or Elasticsearch: a term frequent in one segment and rare in another weighs differently in
each, so the merged ranking of a multi-segment index can differ from the ranking of one index
over every document. A one-segment index (a build, or any index after ``index compact``) ranks
exactly as a BM25 index over the whole corpus.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.deploy.ann import ann_top
from embedding_ttc.deploy.segment import Segment
from embedding_ttc.evaluation.batches import FIRST_STAGE_BLOCK
from embedding_ttc.evaluation.metrics import top_k

FirstStage = Literal["dense", "exact", "bm25"]
"""The built-in first stages of a deployed index: dense (ANN where a segment has one), the same
scored exactly over every document, or BM25."""

FIRST_STAGES: tuple[FirstStage, ...] = ("dense", "exact", "bm25")

Hits = tuple[NDArray[np.intp], NDArray[np.float32]]
"""One query's documents (index rows) and their scores."""


def _merge(per_segment: Sequence[Hits], tiebreak: NDArray[np.int64], n: int) -> NDArray[np.intp]:
    rows = np.concatenate([h[0] for h in per_segment]).astype(np.intp)
    scores = np.concatenate([h[1] for h in per_segment]).astype(np.float32)
    return rows[top_k(scores, tiebreak[rows], n)]


def dense(
    segments: Sequence[Segment],
    starts: NDArray[np.intp],
    Q: NDArray[np.float32],
    n: int,
    tiebreak: NDArray[np.int64],
    *,
    exact: bool = False,
) -> list[NDArray[np.intp]]:
    """Each query's best ``n`` index rows by inner product, best first (``exact``: no ANN)."""
    hits: list[list[Hits]] = [[] for _ in range(len(Q))]
    for segment, start in zip(segments, starts, strict=False):
        k = min(n, segment.size)
        if segment.ann is not None and not exact:
            rescore = segment.record.ann.rescore if segment.record.ann is not None else 1
            scores, found = ann_top(segment.ann, segment.documents, Q, k, rescore)
            for i in range(len(Q)):
                ok = found[i] >= 0
                hits[i].append((found[i][ok].astype(np.intp) + start, scores[i][ok]))
            continue
        ranks = tiebreak[start : start + segment.size]
        for b in range(0, len(Q), FIRST_STAGE_BLOCK):
            S = Q[b : b + FIRST_STAGE_BLOCK] @ np.asarray(segment.documents).T
            for i, row in enumerate(S, b):
                best = top_k(row, ranks, k)
                hits[i].append((best.astype(np.intp) + start, row[best]))
    return [_merge(h, tiebreak, n) for h in hits]


def bm25(
    segments: Sequence[Segment],
    starts: NDArray[np.intp],
    queries: Sequence[str],
    n: int,
    tiebreak: NDArray[np.int64],
) -> list[NDArray[np.intp]]:
    """Each query's best ``n`` index rows by its segment's BM25 score, best first."""
    hits: list[list[Hits]] = [[] for _ in range(len(queries))]
    for segment, start in zip(segments, starts, strict=False):
        ranks = tiebreak[start : start + segment.size]
        for i, (rows, scores) in enumerate(segment.bm25.top_k(queries, n, ranks)):
            hits[i].append((rows + start, scores))
    return [_merge(h, tiebreak, n) for h in hits]
