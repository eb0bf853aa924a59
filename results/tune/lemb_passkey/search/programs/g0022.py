"""Structural program: dense + bm25 by a convex combination (weight 0.9 shared by the channels after the first), 1 feedback round.

Novelty: Relative to g0018, adds feedback round 1 (vprf refinement of the fused top-K) [genome dense:row+bm25:row|convex:0.9|1|vprf].
Hypothesis: Fusing the dense cosine S and BM25 by a convex combination (weight 0.9 shared by the channels after the first) should raise nDCG@10 on every task, because BM25 rewards exact rare terms (names, numbers) that embeddings blur; 1 vprf feedback round then pull each query toward its fused top-K.
Parent: g0018
Genome: {"channels": {"dense": "row", "bm25": "row"}, "fusion": "convex", "rounds": 1, "refine": "vprf", "share": 0.9}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import vprf_update
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import candidate_mask, top_k_indices, zscore_rows

FEEDBACK_K = 5
VPRF_BETA = 0.3
FUSION_SHARE = 0.9


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    channels = [
        zscore_rows(S, mask),
        zscore_rows(bm25, mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    query = Q
    # feedback round 1: refine the query from the fused top-K, rescore D
    query = vprf_update(query, D, top_k_indices(fused, FEEDBACK_K, mask), VPRF_BETA)
    fused = zscore_rows(fused, mask) + zscore_rows(query @ D.T, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
