"""Structural program: dense + half_dim + bm25 by a weighted sum, 0 feedback rounds.

Novelty: Relative to the base genome, fuses by a weighted sum instead of reciprocal rank fusion; adds the Matryoshka half-dimension cosine (per-query min-max) [genome dense:row+half_dim:minmax+bm25:row|wsum|0].
Hypothesis: Fusing the dense cosine S, the Matryoshka half-dimension cosine and BM25 by a weighted sum should raise nDCG@10 on every task, because the coarse prefix of the embedding ranks by topic and resists fine-grained noise; BM25 rewards exact rare terms (names, numbers) that embeddings blur.
Parent: g0000-P0
Genome: {"channels": {"dense": "row", "half_dim": "minmax", "bm25": "row"}, "fusion": "wsum", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import candidate_mask, minmax_rows, zscore_rows

NORM_FLOOR = 1e-12
CHANNEL_WEIGHTS = (1.0, 0.5, 0.5)


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
        minmax_rows(half_dim, mask),
        zscore_rows(bm25, mask),
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for weight, channel in zip(CHANNEL_WEIGHTS, channels, strict=True):
        fused += np.float32(weight) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
