"""Structural program: reverse + coverage + rare_idf by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0015, replaces BM25 with the reversed perspective (documents encoded as queries) [genome reverse:row+coverage:none+rare_idf:none|rrf|0].
Hypothesis: Fusing the reversed perspective (documents encoded as queries), query-term coverage and rare-term IDF by reciprocal rank fusion should raise nDCG@10 on every task, because scoring documents as if they were queries cancels the passage view's bias; documents that cover every query term answer the whole query; the rarest query terms identify the few documents that can answer.
Parent: g0015
Genome: {"channels": {"reverse": "row", "coverage": "none", "rare_idf": "none"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.lexical import query_term_coverage, rare_term_idf
from embedding_ttc.programs.primitives.scores import RRF_K, candidate_mask, rrf, zscore_rows


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    with ctx.index_time():
        docs_as_queries = ctx.encode_fn(list(ctx.doc_texts), "retrieval.query")
    reverse = Q @ docs_as_queries.T
    coverage = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
    channels = [
        zscore_rows(reverse, mask),
        coverage,
        rare_idf,
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
