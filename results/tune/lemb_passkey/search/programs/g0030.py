"""Structural program: dense + bm25 + consensus by a convex combination (weight 0.9 shared by the channels after the first), 1 feedback round.

Novelty: Relative to g0018, adds each document's consensus with the dense top-K (per-query min-max); adds feedback round 1 (rocchio refinement of the fused top-K) [genome dense:row+bm25:row+consensus:minmax|convex:0.9|1|rocchio].
Hypothesis: Fusing the dense cosine S, BM25 and each document's consensus with the dense top-K by a convex combination (weight 0.9 shared by the channels after the first) should raise nDCG@10 on every task, because BM25 rewards exact rare terms (names, numbers) that embeddings blur; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks; 1 rocchio feedback round then pull each query toward its fused top-K.
Parent: g0018
Genome: {"channels": {"dense": "row", "bm25": "row", "consensus": "minmax"}, "fusion": "convex", "rounds": 1, "refine": "rocchio", "share": 0.9}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import centroid, rocchio
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import (
    bottom_k_indices,
    candidate_mask,
    minmax_rows,
    top_k_indices,
    zscore_rows,
)

CONSENSUS_K = 10
FEEDBACK_K = 5
ROCCHIO_BETA = 0.6
ROCCHIO_GAMMA = 0.2
FUSION_SHARE = 0.9


def _rocchio_query(query, D, scores, mask):
    """Rocchio (1971): toward the top-K centroid, away from the bottom-K centroid."""
    top = top_k_indices(scores, FEEDBACK_K, mask)
    bottom = bottom_k_indices(scores, FEEDBACK_K, mask)
    positive = np.array([centroid(D, rows) for rows in top], dtype=np.float32)
    negative = np.array([centroid(D, rows) for rows in bottom], dtype=np.float32)
    return rocchio(
        query,
        positive.reshape(query.shape),
        negative.reshape(query.shape),
        alpha=1.0,
        beta=ROCCHIO_BETA,
        gamma=ROCCHIO_GAMMA,
    )


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    channels = [
        zscore_rows(S, mask),
        zscore_rows(bm25, mask),
        minmax_rows(consensus, mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    query = Q
    # feedback round 1: refine the query from the fused top-K, rescore D
    query = _rocchio_query(query, D, fused, mask)
    fused = zscore_rows(fused, mask) + zscore_rows(query @ D.T, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
