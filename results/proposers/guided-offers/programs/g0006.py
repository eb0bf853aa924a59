"""Structural program: dense + half_dim + bm25 + coverage by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0004, adds the Matryoshka half-dimension cosine (column z-scores) [genome dense:row+half_dim:col+bm25:row+coverage:row|rrf|0].
Hypothesis: Adding the Matryoshka half-dimension cosine (column z-scores) could potentially raise nDCG@10 for the aila_statutes task by aligning the dense features with the query normalization. This change aligns the dense features with the query normalization. This c…
Parent: g0004
Genome: {"channels": {"dense": "row", "half_dim": "col", "bm25": "row", "coverage": "row"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage
from embedding_ttc.programs.primitives.scores import (
    RRF_K,
    candidate_mask,
    rrf,
    zscore_cols,
    zscore_rows,
)

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
    coverage = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    channels = [
        zscore_rows(S, mask),
        zscore_cols(half_dim, mask),
        zscore_rows(bm25, mask),
        zscore_rows(coverage, mask),
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
