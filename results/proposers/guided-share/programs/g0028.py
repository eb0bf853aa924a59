"""Structural program: dense + prf_soft by a convex combination (weight 0.6 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0005, replaces BM25 with a SoftCentroid-refined query [genome dense:row+prf_soft:row|convex:0.6|0].
Hypothesis: Adding a SoftCentroid-refined query (prf_soft) to replace BM25 (row z-scores) improves nDCG@10 on every task because it sharpens the query and ensures that the best-matching part of a document is emphasized. BM25 rewards exact rare terms (names, numbers) that embeddings blur, and prf_soft focuses on
Parent: g0005
Genome: {"channels": {"dense": "row", "prf_soft": "row"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.6}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows

FUSION_SHARE = 0.6


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    prf_soft = soft_centroid_query(Q, D, S, mask=mask) @ D.T
    channels = [
        zscore_rows(S, mask),
        zscore_rows(prf_soft, mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
