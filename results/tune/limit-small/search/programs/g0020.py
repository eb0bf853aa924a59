"""Structural program: coverage + rare_idf + prf_soft by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0015, switches BM25 to raw scores (was row z-scores); replaces BM25 with a SoftCentroid-refined query [genome coverage:none+rare_idf:none+prf_soft:none|rrf|0].
Hypothesis: Fusing query-term coverage, rare-term IDF and a SoftCentroid-refined query by reciprocal rank fusion should raise nDCG@10 on every task, because documents that cover every query term answer the whole query; the rarest query terms identify the few documents that can answer; a score-weighted centroid of the top documents sharpens the query.
Parent: g0015
Genome: {"channels": {"coverage": "none", "rare_idf": "none", "prf_soft": "none"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import query_term_coverage, rare_term_idf
from embedding_ttc.programs.primitives.scores import RRF_K, candidate_mask, rrf


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    coverage = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
    prf_soft = soft_centroid_query(Q, D, S, mask=mask) @ D.T
    channels = [
        coverage,
        rare_idf,
        prf_soft,
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
