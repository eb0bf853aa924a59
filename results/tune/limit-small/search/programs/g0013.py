"""Structural program: dense + coverage by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0010, drops BM25 [genome dense:both+coverage:none|rrf|0].
Hypothesis: Fusing the dense cosine S and query-term coverage by reciprocal rank fusion should raise nDCG@10 on every task, because documents that cover every query term answer the whole query.
Parent: g0010
Genome: {"channels": {"dense": "both", "coverage": "none"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.lexical import query_term_coverage
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
    coverage = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    channels = [
        zscore_rows(zscore_cols(S, mask), mask),
        coverage,
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
