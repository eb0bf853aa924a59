"""Structural program: dense + prf_vprf by a convex combination (weight 0.5 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0005, replaces BM25 with a VPRF-refined query; (every single edit of g0007 is tried; the next open parent) [genome dense:row+prf_vprf:row|convex:0.5|0].
Hypothesis: Swapping BM25 with a VPRF-refined query improves nDCG@10 by reducing noise and aligning the cosine vectors with the topic distribution, which can improve the relevance of the documents.
Parent: g0005
Genome: {"channels": {"dense": "row", "prf_vprf": "row"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.5}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import vprf_update
from embedding_ttc.programs.primitives.scores import candidate_mask, top_k_indices, zscore_rows

FEEDBACK_K = 5
VPRF_BETA = 0.3
FUSION_SHARE = 0.5


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    prf_vprf = vprf_update(Q, D, top_k_indices(S, FEEDBACK_K, mask), VPRF_BETA) @ D.T
    channels = [
        zscore_rows(S, mask),
        zscore_rows(prf_vprf, mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
