"""Structural program: dense + bm25 + rare_idf + prf_vprf by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0004, replaces TopMeanSim over paragraphs with a VPRF-refined query [genome dense:row+bm25:row+rare_idf:col+prf_vprf:col|rrf|0].
Hypothesis: Swapping TopMeanSim over paragraphs with a VPRF-refined query can help in increasing nDCG@10, as it provides a coarse prefix of the embedding ranks by topic and resists fine-grained noise.
Parent: g0004
Genome: {"channels": {"dense": "row", "bm25": "row", "rare_idf": "col", "prf_vprf": "col"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import vprf_update
from embedding_ttc.programs.primitives.lexical import BM25, rare_term_idf
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


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
    prf_vprf = vprf_update(Q, D, top_k_indices(S, FEEDBACK_K, mask), VPRF_BETA) @ D.T
    channels = [
        zscore_rows(S, mask),
        zscore_rows(bm25, mask),
        zscore_cols(rare_idf, mask),
        zscore_cols(prf_vprf, mask),
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
