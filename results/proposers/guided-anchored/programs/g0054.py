"""Structural program: dense + anti_hub by a convex combination (weight 0.5 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0005, replaces BM25 with the distance from the candidates' centroid (a hubness correction); (every single edit of g0007 is tried; the next open parent) [genome dense:row+anti_hub:row|convex:0.5|0].
Hypothesis: Replacing BM25 with the distance from the candidates' centroid (a hubness correction) (per-query min-max) improves nDCG@10 by aligning the cosine vectors with the topic distribution, which can reduce the impact of noise and improve the relevancy of the documents.
Parent: g0005
Genome: {"channels": {"dense": "row", "anti_hub": "row"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.5}
"""

import numpy as np

from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows

NORM_FLOOR = 1e-12
FUSION_SHARE = 0.5


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
        zscore_rows(anti_hub, mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
