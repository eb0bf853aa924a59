"""Structural program: dense + half_dim by a convex combination (weight 0.5 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0005, replaces BM25 with the Matryoshka half-dimension cosine; (every single edit of g0007 is tried; the next open parent) [genome dense:row+half_dim:row|convex:0.5|0].
Hypothesis: Replacing BM25 with the Matryoshka half-dimension cosine (per-query min-max) improves nDCG@10 by aligning the cosine vectors with the topic distribution, which can reduce the impact of noise and improve the relevance of the documents.
Parent: g0005
Genome: {"channels": {"dense": "row", "half_dim": "row"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.5}
"""

import numpy as np

from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows

NORM_FLOOR = 1e-12
FUSION_SHARE = 0.5


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    half = max(1, Q.shape[1] // 2)
    q_half = Q[:, :half] / np.maximum(
        np.linalg.norm(Q[:, :half], axis=1, keepdims=True), NORM_FLOOR
    )
    d_half = D[:, :half] / np.maximum(
        np.linalg.norm(D[:, :half], axis=1, keepdims=True), NORM_FLOOR
    )
    half_dim = q_half @ d_half.T
    channels = [
        zscore_rows(S, mask),
        zscore_rows(half_dim, mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
