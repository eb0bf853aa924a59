"""Structural program: dense + half_dim + bm25 by a sum of row z-scores, 0 feedback rounds.

Novelty: Relative to g0010, adds the Matryoshka half-dimension cosine (row z-scores) [genome dense:row+half_dim:row+bm25:row|zsum|0].
Hypothesis: Adding the Matryoshka half-dimension cosine (row z-scores) improves nDCG@10 on every task, because BM25 rewards exact rare terms (names, numbers) that embeddings blur.
Parent: g0010
Genome: {"channels": {"dense": "row", "half_dim": "row", "bm25": "row"}, "fusion": "zsum", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows

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
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    channels = [
        zscore_rows(S, mask),
        zscore_rows(half_dim, mask),
        zscore_rows(bm25, mask),
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for channel in channels:
        fused += zscore_rows(channel, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
