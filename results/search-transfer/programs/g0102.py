"""Structural program: dense + bigram + anti_hub by a convex combination (weight 0.8 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0093, drops rare-term IDF [genome dense:row+bigram:minmax+anti_hub:none|convex:0.8|0].
Hypothesis: Fusing the dense cosine S, word-bigram overlap and the distance from the candidates' centroid (a hubness correction) by a convex combination (weight 0.8 shared by the channels after the first) should raise nDCG@10 on every task, because phrases matched in order are stronger evidence than single words; hub documents sit near every candidate set's centre and crowd every ranking.
Parent: g0093
Genome: {"channels": {"dense": "row", "bigram": "minmax", "anti_hub": "none"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.8}
"""

import numpy as np

from embedding_ttc.programs.primitives.lexical import bigram_overlap
from embedding_ttc.programs.primitives.scores import ZSCORE_EPS, candidate_mask, zscore_rows

NORM_FLOOR = 1e-12
FUSION_SHARE = 0.8


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
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    members = np.ones((1, n_d), dtype=np.float32)
    if mask is not None:
        members = mask.astype(np.float32)
    pool_centroids = members @ D
    pool_centroids /= np.maximum(
        np.linalg.norm(pool_centroids, axis=1, keepdims=True), NORM_FLOOR
    )
    anti_hub = np.broadcast_to(-(pool_centroids @ D.T), (n_q, n_d)).copy()
    channels = [
        zscore_rows(S, mask),
        _minmax_rows(bigram, mask),
        anti_hub,
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
