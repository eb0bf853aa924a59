"""Structural program: dense + bm25 + prf_vprf by a sum of row z-scores, 0 feedback rounds.

Novelty: Relative to g0007, replaces MaxSim over sentences with a VPRF-refined query [genome dense:row+bm25:both+prf_vprf:both|zsum|0].
Hypothesis: Fusing the dense cosine S, BM25 and a VPRF-refined query by a sum of row z-scores should raise nDCG@10 on every task, because BM25 rewards exact rare terms (names, numbers) that embeddings blur; a uniform mean of the top documents pulls the query toward the relevant cluster.
Parent: g0007
Genome: {"channels": {"dense": "row", "bm25": "both", "prf_vprf": "both"}, "fusion": "zsum", "rounds": 0, "refine": "rocchio"}
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
        zscore_rows(zscore_cols(bm25, mask), mask),
        zscore_rows(zscore_cols(prf_vprf, mask), mask),
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for channel in channels:
        fused += zscore_rows(channel, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
