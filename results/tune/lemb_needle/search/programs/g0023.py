"""Structural program: dense + bm25 + consensus by a convex combination (weight 0.9 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0018, adds each document's consensus with the dense top-K (column z-scores) [genome dense:row+bm25:row+consensus:col|convex:0.9|0].
Hypothesis: Fusing the dense cosine S, BM25 and each document's consensus with the dense top-K by a convex combination (weight 0.9 shared by the channels after the first) should raise nDCG@10 on every task, because BM25 rewards exact rare terms (names, numbers) that embeddings blur; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks.
Parent: g0018
Genome: {"channels": {"dense": "row", "bm25": "row", "consensus": "col"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.9}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import centroid
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import (
    candidate_mask,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

CONSENSUS_K = 10
FUSION_SHARE = 0.9


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
        zscore_cols(consensus, mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
