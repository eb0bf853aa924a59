"""Structural program: dense + bm25 + prf_vprf by a sum of row z-scores, 2 feedback rounds.

Novelty: Relative to g0009, adds a VPRF-refined query (raw scores) [genome dense:row+bm25:row+prf_vprf:none|zsum|2|softcentroid].
Hypothesis: Fusing the dense cosine S, BM25 and a VPRF-refined query by a sum of row z-scores should raise nDCG@10 on every task, because BM25 rewards exact rare terms (names, numbers) that embeddings blur; a uniform mean of the top documents pulls the query toward the relevant cluster; 2 softcentroid feedback rounds then pull each query toward its fused top-K.
Parent: g0009
Genome: {"channels": {"dense": "row", "bm25": "row", "prf_vprf": "none"}, "fusion": "zsum", "rounds": 2, "refine": "softcentroid"}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import soft_centroid_query, vprf_update
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import candidate_mask, top_k_indices, zscore_rows

FEEDBACK_K = 5
VPRF_BETA = 0.3
SOFT_TAU = 1.0
SOFT_ALPHA = 0.5


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    prf_vprf = vprf_update(Q, D, top_k_indices(S, FEEDBACK_K, mask), VPRF_BETA) @ D.T
    channels = [
        zscore_rows(S, mask),
        zscore_rows(bm25, mask),
        prf_vprf,
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for channel in channels:
        fused += zscore_rows(channel, mask)
    query = Q
    # feedback round 1: refine the query from the fused top-K, rescore D
    query = soft_centroid_query(
        query, D, zscore_rows(fused, mask), k=FEEDBACK_K, tau=SOFT_TAU, alpha=SOFT_ALPHA, mask=mask
    )
    fused = zscore_rows(fused, mask) + zscore_rows(query @ D.T, mask)
    # feedback round 2: refine the query from the fused top-K, rescore D
    query = soft_centroid_query(
        query, D, zscore_rows(fused, mask), k=FEEDBACK_K, tau=SOFT_TAU, alpha=SOFT_ALPHA, mask=mask
    )
    fused = zscore_rows(fused, mask) + zscore_rows(query @ D.T, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
