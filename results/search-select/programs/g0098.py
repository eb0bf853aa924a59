"""Structural program: dense + prf_soft by a convex combination (weight 0.9 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0089, drops MaxSim over paragraphs; drops BM25; switches the dense cosine S to column z-scores (was row z-scores); drops each document's consensus with the dense top-K; replaces word-bigram overlap with a SoftCentroid-refined query [genome dense:col+prf_soft:col|convex:0.9|0].
Hypothesis: Fusing the dense cosine S and a SoftCentroid-refined query by a convex combination (weight 0.9 shared by the channels after the first) should raise nDCG@10 on every task, because a score-weighted centroid of the top documents sharpens the query.
Parent: g0089
Genome: {"channels": {"dense": "col", "prf_soft": "col"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.9}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_cols

FUSION_SHARE = 0.9


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    prf_soft = soft_centroid_query(Q, D, S, mask=mask) @ D.T
    channels = [
        zscore_cols(S, mask),
        zscore_cols(prf_soft, mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
