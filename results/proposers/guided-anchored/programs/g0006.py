"""Structural program: dense + half_dim + bm25 by a convex combination (weight 0.5 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0005, adds the Matryoshka half-dimension cosine (column z-scores) [genome dense:row+half_dim:col+bm25:row|convex:0.5|0].
Hypothesis: Adding the Matryoshka half-dimension cosine (column z-scores) improves nDCG@10 by aligning the cosine vectors with the topic distribution, which can reduce the impact of noise and improve the relevance of the top documents.
Parent: g0005
Genome: {"channels": {"dense": "row", "half_dim": "col", "bm25": "row"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.5}
"""

import numpy as np

from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_cols, zscore_rows

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
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    channels = [
        zscore_rows(S, mask),
        zscore_cols(half_dim, mask),
        zscore_rows(bm25, mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
