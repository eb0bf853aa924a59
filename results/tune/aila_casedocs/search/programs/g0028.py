"""Structural program: dense + coverage + rare_idf + anti_hub by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0025, replaces MaxSim over sentence pairs with the distance from the candidates' centroid (a hubness correction) [genome dense:col+coverage:col+rare_idf:col+anti_hub:both|rrf|0].
Hypothesis: Fusing the dense cosine S, query-term coverage, rare-term IDF and the distance from the candidates' centroid (a hubness correction) by reciprocal rank fusion should raise nDCG@10 on every task, because documents that cover every query term answer the whole query; the rarest query terms identify the few documents that can answer; hub documents sit near every candidate set's centre and crowd every ranking.
Parent: g0025
Genome: {"channels": {"dense": "col", "coverage": "col", "rare_idf": "col", "anti_hub": "both"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.lexical import query_term_coverage, rare_term_idf
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
    coverage = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
    members = np.ones((1, n_d), dtype=np.float32)
    if mask is not None:
        members = mask.astype(np.float32)
    pool_centroids = members @ D
    pool_centroids /= np.maximum(
        np.linalg.norm(pool_centroids, axis=1, keepdims=True), NORM_FLOOR
    )
    anti_hub = np.broadcast_to(-(pool_centroids @ D.T), (n_q, n_d)).copy()
    channels = [
        zscore_cols(S, mask),
        zscore_cols(coverage, mask),
        zscore_cols(rare_idf, mask),
        zscore_rows(zscore_cols(anti_hub, mask), mask),
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
