"""Structural program: dense + bm25 + coverage by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0001, adds query-term coverage (row z-scores) [genome dense:row+bm25:row+coverage:row|rrf|0].
Hypothesis: Adding the pair_topmean channel over sentence pairs would raise nDCG@10 on every task because it computes the topMeanSim over sentence pairs, which carries the evidence that one pooled vector dilutes the similarity between documents and helps in identifying the most relevant parts of long documents.
Parent: g0001
Genome: {"channels": {"dense": "row", "bm25": "row", "coverage": "row"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage
from embedding_ttc.programs.primitives.scores import RRF_K, candidate_mask, rrf, zscore_rows


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    coverage = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    channels = [
        zscore_rows(S, mask),
        zscore_rows(bm25, mask),
        zscore_rows(coverage, mask),
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
