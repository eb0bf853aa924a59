"""Structural program: dense + bm25 + coverage by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0001, switches the dense cosine S to column-then-row z-scores (was row z-scores); adds query-term coverage (raw scores) [genome dense:both+bm25:row+coverage:none|rrf|0].
Hypothesis: Fusing the dense cosine S, BM25 and query-term coverage by reciprocal rank fusion should raise nDCG@10 on every task, because BM25 rewards exact rare terms (names, numbers) that embeddings blur; documents that cover every query term answer the whole query.
Parent: g0001
Genome: {"channels": {"dense": "both", "bm25": "row", "coverage": "none"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage
from embedding_ttc.programs.primitives.scores import (
    RRF_K,
    candidate_mask,
    rrf,
    zscore_cols,
    zscore_rows,
)


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    coverage = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    channels = [
        zscore_rows(zscore_cols(S, mask), mask),
        zscore_rows(bm25, mask),
        coverage,
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
