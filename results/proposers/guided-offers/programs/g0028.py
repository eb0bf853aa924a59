"""Structural program: dense + coverage by reciprocal rank fusion, 1 feedback round.

Novelty: Relative to g0005, drops BM25 [genome dense:row+coverage:row|rrf|1|softcentroid].
Hypothesis: Dropping BM25 will likely hurt nDCG@10 because BM25 is known to reward exact rare terms (names, numbers), which will dilute the relevance of the dense cosine S. The combination of dense cosine S and BM25 may not provide the best evidence for the query, leading to lower nDCG@10 compared to keeping BM
Parent: g0005
Genome: {"channels": {"dense": "row", "coverage": "row"}, "fusion": "rrf", "rounds": 1, "refine": "softcentroid"}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import query_term_coverage
from embedding_ttc.programs.primitives.scores import RRF_K, candidate_mask, rrf, zscore_rows

FEEDBACK_K = 5
SOFT_TAU = 1.0
SOFT_ALPHA = 0.5


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    coverage = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    channels = [
        zscore_rows(S, mask),
        zscore_rows(coverage, mask),
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
