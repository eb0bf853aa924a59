"""Structural program: bigram + coverage + rare_idf + prf_vprf + anti_hub by reciprocal rank fusion, 1 feedback round.

Novelty: Relative to g0025, replaces BM25 with a VPRF-refined query [genome bigram:row+coverage:row+rare_idf:row+prf_vprf:row+anti_hub:both|rrf|1|softcentroid].
Hypothesis: Replaces the dense cosine S with a VPRF-refined query to potentially raise nDCG@10 for the aila_statutes task by aligning the dense features with the query normalization.
Parent: g0025
Genome: {"channels": {"bigram": "row", "coverage": "row", "rare_idf": "row", "prf_vprf": "row", "anti_hub": "both"}, "fusion": "rrf", "rounds": 1, "refine": "softcentroid"}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import soft_centroid_query, vprf_update
from embedding_ttc.programs.primitives.lexical import (
    bigram_overlap,
    query_term_coverage,
    rare_term_idf,
)
from embedding_ttc.programs.primitives.scores import (
    RRF_K,
    candidate_mask,
    rrf,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

FEEDBACK_K = 5
VPRF_BETA = 0.3
NORM_FLOOR = 1e-12
SOFT_TAU = 1.0
SOFT_ALPHA = 0.5


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    coverage = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
    prf_vprf = vprf_update(Q, D, top_k_indices(S, FEEDBACK_K, mask), VPRF_BETA) @ D.T
    members = np.ones((1, n_d), dtype=np.float32)
    if mask is not None:
        members = mask.astype(np.float32)
    pool_centroids = members @ D
    pool_centroids /= np.maximum(
        np.linalg.norm(pool_centroids, axis=1, keepdims=True), NORM_FLOOR
    )
    anti_hub = np.broadcast_to(-(pool_centroids @ D.T), (n_q, n_d)).copy()
    channels = [
        zscore_rows(bigram, mask),
        zscore_rows(coverage, mask),
        zscore_rows(rare_idf, mask),
        zscore_rows(prf_vprf, mask),
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
