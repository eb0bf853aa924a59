"""Structural program: bm25 + bigram + rare_idf + consensus + anti_hub by reciprocal rank fusion, 1 feedback round.

Novelty: Relative to g0025, replaces query-term coverage with each document's consensus with the dense top-K [genome bm25:row+bigram:row+rare_idf:row+consensus:row+anti_hub:both|rrf|1|softcentroid].
Hypothesis: Replacing query-term coverage with each document's consensus with the dense top-K could potentially raise nDCG@10 for the aila_statutes task by aligning the dense features with the query normalization.
Parent: g0025
Genome: {"channels": {"bm25": "row", "bigram": "row", "rare_idf": "row", "consensus": "row", "anti_hub": "both"}, "fusion": "rrf", "rounds": 1, "refine": "softcentroid"}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import centroid, soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25, bigram_overlap, rare_term_idf
from embedding_ttc.programs.primitives.scores import (
    RRF_K,
    candidate_mask,
    rrf,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

CONSENSUS_K = 10
NORM_FLOOR = 1e-12
FEEDBACK_K = 5
SOFT_TAU = 1.0
SOFT_ALPHA = 0.5


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    members = np.ones((1, n_d), dtype=np.float32)
    if mask is not None:
        members = mask.astype(np.float32)
    pool_centroids = members @ D
    pool_centroids /= np.maximum(
        np.linalg.norm(pool_centroids, axis=1, keepdims=True), NORM_FLOOR
    )
    anti_hub = np.broadcast_to(-(pool_centroids @ D.T), (n_q, n_d)).copy()
    channels = [
        zscore_rows(bm25, mask),
        zscore_rows(bigram, mask),
        zscore_rows(rare_idf, mask),
        zscore_rows(consensus, mask),
        zscore_rows(zscore_cols(anti_hub, mask), mask),
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
