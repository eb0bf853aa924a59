"""Structural program: bm25 + bigram + rare_idf + prf_rocchio by a convex combination (weight 0.5 shared by the channels after the first), 1 feedback round.

Novelty: Relative to g0048, drops the Matryoshka half-dimension cosine [genome bm25:row+bigram:row+rare_idf:row+prf_rocchio:both|convex:0.5|1|softcentroid].
Hypothesis: Dropping the Matryoshka half-dimension cosine can potentially raise nDCG@10 for the aila_statutes task by aligning the dense features with the query normalization. This change replaces a Matryoshka half-dimension cosine with TopMeanSim over sentences, which aligns the dense features with the query.
Parent: g0048
Genome: {"channels": {"bm25": "row", "bigram": "row", "rare_idf": "row", "prf_rocchio": "both"}, "fusion": "convex", "rounds": 1, "refine": "softcentroid", "share": 0.5}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import centroid, rocchio, soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25, bigram_overlap, rare_term_idf
from embedding_ttc.programs.primitives.scores import (
    bottom_k_indices,
    candidate_mask,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

FEEDBACK_K = 5
ROCCHIO_BETA = 0.6
ROCCHIO_GAMMA = 0.2
SOFT_TAU = 1.0
SOFT_ALPHA = 0.5
FUSION_SHARE = 0.5


def _rocchio_query(query, D, scores, mask):
    """Rocchio (1971): toward the top-K centroid, away from the bottom-K centroid."""
    top = top_k_indices(scores, FEEDBACK_K, mask)
    bottom = bottom_k_indices(scores, FEEDBACK_K, mask)
    positive = np.array([centroid(D, rows) for rows in top], dtype=np.float32)
    negative = np.array([centroid(D, rows) for rows in bottom], dtype=np.float32)
    return rocchio(
        query,
        positive.reshape(query.shape),
        negative.reshape(query.shape),
        alpha=1.0,
        beta=ROCCHIO_BETA,
        gamma=ROCCHIO_GAMMA,
    )


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
    prf_rocchio = _rocchio_query(Q, D, S, mask) @ D.T
    channels = [
        zscore_rows(bm25, mask),
        zscore_rows(bigram, mask),
        zscore_rows(rare_idf, mask),
        zscore_rows(zscore_cols(prf_rocchio, mask), mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    query = Q
    # feedback round 1: refine the query from the fused top-K, rescore D
    query = soft_centroid_query(
        query, D, zscore_rows(fused, mask), k=FEEDBACK_K, tau=SOFT_TAU, alpha=SOFT_ALPHA, mask=mask
    )
    fused = zscore_rows(fused, mask) + zscore_rows(query @ D.T, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
