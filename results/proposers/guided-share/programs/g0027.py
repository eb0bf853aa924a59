"""Structural program: dense + bm25 + prf_vprf by a sum of row z-scores, 0 feedback rounds.

Novelty: Relative to g0010, adds a VPRF-refined query (column-then-row z-scores) [genome dense:row+bm25:row+prf_vprf:both|zsum|0].
Hypothesis: Adding a VPRF-refined query (column-then-row z-scores) improves nDCG@10 on every task, as it ensures that the best-matching part of a long document carries the evidence that one pooled vector dilutes.
Parent: g0010
Genome: {"channels": {"dense": "row", "bm25": "row", "prf_vprf": "both"}, "fusion": "zsum", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import vprf_update
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import (
    candidate_mask,
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
    prf_vprf = vprf_update(Q, D, top_k_indices(S, FEEDBACK_K, mask), VPRF_BETA) @ D.T
    channels = [
        zscore_rows(S, mask),
        zscore_rows(bm25, mask),
        zscore_rows(zscore_cols(prf_vprf, mask), mask),
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for channel in channels:
        fused += zscore_rows(channel, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
