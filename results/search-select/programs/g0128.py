"""Structural program: dense + bm25 + bigram + consensus + anti_hub by a convex combination (weight 0.9 shared by the channels after the first), 1 feedback round.

Novelty: Relative to g0089, drops MaxSim over paragraphs; adds feedback round 1 (vprf refinement of the fused top-K); adds the distance from the candidates' centroid (a hubness correction) (column-then-row z-scores) [genome dense:row+bm25:row+bigram:col+consensus:none+anti_hub:both|convex:0.9|1|vprf].
Hypothesis: Fusing the dense cosine S, BM25, word-bigram overlap, each document's consensus with the dense top-K and the distance from the candidates' centroid (a hubness correction) by a convex combination (weight 0.9 shared by the channels after the first) should raise nDCG@10 on every task, because BM25 rewards exact rare terms (names, numbers) that embeddings blur; phrases matched in order are stronger evidence than single words; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks; hub documents sit near every candidate set's centre and crowd every ranking; 1 vprf feedback round then pull each query toward its fused top-K.
Parent: g0089
Genome: {"channels": {"dense": "row", "bm25": "row", "bigram": "col", "consensus": "none", "anti_hub": "both"}, "fusion": "convex", "rounds": 1, "refine": "vprf", "share": 0.9}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import centroid, vprf_update
from embedding_ttc.programs.primitives.lexical import BM25, bigram_overlap
from embedding_ttc.programs.primitives.scores import (
    candidate_mask,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

CONSENSUS_K = 10
NORM_FLOOR = 1e-12
FEEDBACK_K = 5
VPRF_BETA = 0.3
FUSION_SHARE = 0.9


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    members = np.ones((1, n_d), dtype=np.float32)
    if mask is not None:
        members = mask.astype(np.float32)
    pool_centroids = members @ D
    pool_centroids /= np.maximum(
        np.linalg.norm(pool_centroids, axis=1, keepdims=True), NORM_FLOOR
    )
    anti_hub = np.broadcast_to(-(pool_centroids @ D.T), (n_q, n_d)).copy()
    channels = [
        zscore_rows(S, mask),
        zscore_rows(bm25, mask),
        zscore_cols(bigram, mask),
        consensus,
        zscore_rows(zscore_cols(anti_hub, mask), mask),
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
