"""Structural program: dense + bm25 + prf_vprf by a convex combination (weight 0.5 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0005, adds a VPRF-refined query (per-query min-max); (every single edit of g0007 is tried; the next open parent) [genome dense:row+bm25:row+prf_vprf:minmax|convex:0.5|0].
Hypothesis: Adding a VPRF-refined query (per-query min-max) improves nDCG@10 by reducing noise and aligning the cosine vectors with the topic distribution, which can improve the relevancy of the documents.
Parent: g0005
Genome: {"channels": {"dense": "row", "bm25": "row", "prf_vprf": "minmax"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.5}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import vprf_update
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import (
    ZSCORE_EPS,
    candidate_mask,
    top_k_indices,
    zscore_rows,
)

FEEDBACK_K = 5
VPRF_BETA = 0.3
FUSION_SHARE = 0.5


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
    prf_vprf = vprf_update(Q, D, top_k_indices(S, FEEDBACK_K, mask), VPRF_BETA) @ D.T
    channels = [
        zscore_rows(S, mask),
        zscore_rows(bm25, mask),
        _minmax_rows(prf_vprf, mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
