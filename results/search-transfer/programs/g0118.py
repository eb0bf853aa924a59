"""Structural program: dense + rare_idf + consensus by a convex combination (weight 0.7 shared by the channels after the first), 1 feedback round.

Novelty: Relative to g0093, moves the share of the channels after the first from 0.8 to 0.7; drops word-bigram overlap; replaces the distance from the candidates' centroid (a hubness correction) with each document's consensus with the dense top-K; adds feedback round 1 (vprf refinement of the fused top-K) [genome dense:row+rare_idf:col+consensus:none|convex:0.7|1|vprf].
Hypothesis: Fusing the dense cosine S, rare-term IDF and each document's consensus with the dense top-K by a convex combination (weight 0.7 shared by the channels after the first) should raise nDCG@10 on every task, because the rarest query terms identify the few documents that can answer; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks; 1 vprf feedback round then pull each query toward its fused top-K.
Parent: g0093
Genome: {"channels": {"dense": "row", "rare_idf": "col", "consensus": "none"}, "fusion": "convex", "rounds": 1, "refine": "vprf", "share": 0.7}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import centroid, vprf_update
from embedding_ttc.programs.primitives.lexical import rare_term_idf
from embedding_ttc.programs.primitives.scores import (
    candidate_mask,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

CONSENSUS_K = 10
FEEDBACK_K = 5
VPRF_BETA = 0.3
FUSION_SHARE = 0.7


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    channels = [
        zscore_rows(S, mask),
        zscore_cols(rare_idf, mask),
        consensus,
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
