"""Structural program: dense + anti_hub by a convex combination (weight 0.6 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0018, adds the distance from the candidates' centroid (a hubness correction) (column z-scores); drops BM25 [genome dense:row+anti_hub:col|convex:0.6|0].
Hypothesis: Fusing the dense cosine S and the distance from the candidates' centroid (a hubness correction) by a convex combination (weight 0.6 shared by the channels after the first) should raise nDCG@10 on every task, because hub documents sit near every candidate set's centre and crowd every ranking.
Parent: g0018
Genome: {"channels": {"dense": "row", "anti_hub": "col"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.6}
"""

import numpy as np

from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_cols, zscore_rows

NORM_FLOOR = 1e-12
FUSION_SHARE = 0.6


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
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
        zscore_cols(anti_hub, mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
