"""Structural program: dense + bm25 + rare_idf by a convex combination (weight 0.8 shared by the channels after the first), 1 feedback round.

Novelty: Relative to g0019, adds rare-term IDF (per-query min-max) [genome dense:minmax+bm25:row+rare_idf:minmax|convex:0.8|1|vprf].
Hypothesis: Fusing the dense cosine S, BM25 and rare-term IDF by a convex combination (weight 0.8 shared by the channels after the first) should raise nDCG@10 on every task, because BM25 rewards exact rare terms (names, numbers) that embeddings blur; the rarest query terms identify the few documents that can answer; 1 vprf feedback round then pull each query toward its fused top-K.
Parent: g0019
Genome: {"channels": {"dense": "minmax", "bm25": "row", "rare_idf": "minmax"}, "fusion": "convex", "rounds": 1, "refine": "vprf", "share": 0.8}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import vprf_update
from embedding_ttc.programs.primitives.lexical import BM25, rare_term_idf
from embedding_ttc.programs.primitives.scores import (
    candidate_mask,
    minmax_rows,
    top_k_indices,
    zscore_rows,
)

FEEDBACK_K = 5
VPRF_BETA = 0.3
FUSION_SHARE = 0.8


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
    channels = [
        minmax_rows(S, mask),
        zscore_rows(bm25, mask),
        minmax_rows(rare_idf, mask),
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
