"""Structural program: bm25 + coverage + rare_idf by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0010, drops the dense cosine S; adds rare-term IDF (raw scores) [genome bm25:row+coverage:none+rare_idf:none|rrf|0].
Hypothesis: Fusing BM25, query-term coverage and rare-term IDF by reciprocal rank fusion should raise nDCG@10 on every task, because BM25 rewards exact rare terms (names, numbers) that embeddings blur; documents that cover every query term answer the whole query; the rarest query terms identify the few documents that can answer.
Parent: g0010
Genome: {"channels": {"bm25": "row", "coverage": "none", "rare_idf": "none"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage, rare_term_idf
from embedding_ttc.programs.primitives.scores import RRF_K, candidate_mask, rrf, zscore_rows


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    coverage = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
    channels = [
        zscore_rows(bm25, mask),
        coverage,
        rare_idf,
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
