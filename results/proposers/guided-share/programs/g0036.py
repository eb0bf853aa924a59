"""Structural program: dense + bm25 + bigram by a convex combination (weight 0.7 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0032, switches the dense cosine S to row z-scores (was z-scores over the dense top-K) [genome dense:row+bm25:row+bigram:minmax|convex:0.7|0].
Hypothesis: Switching the dense cosine S to row z-scores (was z-scores over the dense top-K) improves nDCG@10 on every task, because BM25 rewards exact rare terms (names, numbers) that embeddings blur. This change allows for a more accurate representation of the dense part of the embedding, which is essential a
Parent: g0032
Genome: {"channels": {"dense": "row", "bm25": "row", "bigram": "minmax"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.7}
"""

import numpy as np

from embedding_ttc.programs.primitives.lexical import BM25, bigram_overlap
from embedding_ttc.programs.primitives.scores import ZSCORE_EPS, candidate_mask, zscore_rows

FUSION_SHARE = 0.7


def _minmax_rows(scores, mask):
    """Min-max over each query's candidates: its best candidate 1, its worst 0.

    A query whose candidates span at most ZSCORE_EPS (one candidate, a constant row) is all 0,
    as the z-scores treat a row without spread; non-candidates are 0.
    """
    cand = np.ones(np.shape(scores), dtype=bool) if mask is None else mask
    x = np.where(cand, scores, 0.0).astype(np.float64)
    low = x.min(axis=1, keepdims=True, where=cand, initial=np.inf)
    high = x.max(axis=1, keepdims=True, where=cand, initial=-np.inf)
    span = high - low
    spread = span > ZSCORE_EPS
    scaled = np.where(spread, (x - low) / np.where(spread, span, 1.0), 0.0)
    return np.where(cand, scaled, 0.0).astype(np.float32)


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    channels = [
        zscore_rows(S, mask),
        zscore_rows(bm25, mask),
        _minmax_rows(bigram, mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
