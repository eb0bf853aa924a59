"""Structural program: dense + xview by reciprocal rank fusion, 1 feedback round.

Novelty: Relative to g0006, drops each document's consensus with the dense top-K; replaces BM25 with the cross-adapter text-matching view [genome dense:row+xview:row|rrf|1|softcentroid].
Hypothesis: Fusing the dense cosine S and the cross-adapter text-matching view by reciprocal rank fusion should raise nDCG@10 on every task, because a second adapter votes where the retrieval views disagree; 1 softcentroid feedback round then pull each query toward its fused top-K.
Parent: g0006
Genome: {"channels": {"dense": "row", "xview": "row"}, "fusion": "rrf", "rounds": 1, "refine": "softcentroid"}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.scores import RRF_K, candidate_mask, rrf, zscore_rows

FEEDBACK_K = 5
SOFT_TAU = 1.0
SOFT_ALPHA = 0.5


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    with ctx.index_time():
        docs_matching = ctx.encode_fn(list(ctx.doc_texts), "text-matching")
    queries_matching = ctx.encode_fn(list(ctx.query_texts), "text-matching")
    xview = queries_matching @ docs_matching.T
    channels = [
        zscore_rows(S, mask),
        zscore_rows(xview, mask),
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
