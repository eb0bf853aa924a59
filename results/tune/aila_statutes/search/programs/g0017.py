"""Structural program: dense + bm25 + prf_soft + consensus + anti_hub by a weighted sum, 0 feedback rounds.

Novelty: Relative to g0015, adds the distance from the candidates' centroid (a hubness correction) (raw scores) [genome dense:row+bm25:row+prf_soft:both+consensus:both+anti_hub:none|wsum|0].
Hypothesis: Fusing the dense cosine S, BM25, a SoftCentroid-refined query, each document's consensus with the dense top-K and the distance from the candidates' centroid (a hubness correction) by a weighted sum should raise nDCG@10 on every task, because BM25 rewards exact rare terms (names, numbers) that embeddings blur; a score-weighted centroid of the top documents sharpens the query; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks; hub documents sit near every candidate set's centre and crowd every ranking.
Parent: g0015
Genome: {"channels": {"dense": "row", "bm25": "row", "prf_soft": "both", "consensus": "both", "anti_hub": "none"}, "fusion": "wsum", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import centroid, soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import (
    candidate_mask,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

CONSENSUS_K = 10
NORM_FLOOR = 1e-12
CHANNEL_WEIGHTS = (1.0, 0.5, 0.5, 0.5, 0.5)


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    prf_soft = soft_centroid_query(Q, D, S, mask=mask) @ D.T
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
        zscore_rows(zscore_cols(prf_soft, mask), mask),
        zscore_rows(zscore_cols(consensus, mask), mask),
        anti_hub,
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for weight, channel in zip(CHANNEL_WEIGHTS, channels, strict=True):
        fused += np.float32(weight) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
