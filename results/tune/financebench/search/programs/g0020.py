"""Structural program: dense + half_dim by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0005, fuses by reciprocal rank fusion instead of a weighted sum; drops feedback round 2; drops feedback round 1; replaces BM25 with the Matryoshka half-dimension cosine [genome dense:row+half_dim:row|rrf|0].
Hypothesis: Fusing the dense cosine S and the Matryoshka half-dimension cosine by reciprocal rank fusion should raise nDCG@10 on every task, because the coarse prefix of the embedding ranks by topic and resists fine-grained noise.
Parent: g0005
Genome: {"channels": {"dense": "row", "half_dim": "row"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.scores import RRF_K, candidate_mask, rrf, zscore_rows

NORM_FLOOR = 1e-12


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
    fused = rrf(channels, mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
