"""Structural program: half_dim + bm25 + bigram + coverage + rare_idf by reciprocal rank fusion, 1 feedback round.

Novelty: Relative to g0016, adds the Matryoshka half-dimension cosine (column z-scores) [genome half_dim:col+bm25:row+bigram:row+coverage:row+rare_idf:row|rrf|1|softcentroid].
Hypothesis: Adding the Matryoshka half-dimension cosine (column z-scores) could potentially raise nDCG@10 on every task by aligning the dense features with the query normalization. This change aligns the dense features with the query normalization, which could potentially improve the query relevance and ranking
Parent: g0016
Genome: {"channels": {"half_dim": "col", "bm25": "row", "bigram": "row", "coverage": "row", "rare_idf": "row"}, "fusion": "rrf", "rounds": 1, "refine": "softcentroid"}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import (
    BM25,
    bigram_overlap,
    query_term_coverage,
    rare_term_idf,
)
from embedding_ttc.programs.primitives.scores import (
    RRF_K,
    candidate_mask,
    rrf,
    zscore_cols,
    zscore_rows,
)

NORM_FLOOR = 1e-12
FEEDBACK_K = 5
SOFT_TAU = 1.0
SOFT_ALPHA = 0.5


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
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    coverage = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
    channels = [
        zscore_cols(half_dim, mask),
        zscore_rows(bm25, mask),
        zscore_rows(bigram, mask),
        zscore_rows(coverage, mask),
        zscore_rows(rare_idf, mask),
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    query = Q
    # feedback round 1: refine the query from the fused top-K, rescore D
    query = soft_centroid_query(
        query, D, zscore_rows(fused, mask), k=FEEDBACK_K, tau=SOFT_TAU, alpha=SOFT_ALPHA, mask=mask
    )
    fused = rrf([fused, query @ D.T], mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
