"""Structural program: dense + xview + consensus by a weighted sum, 0 feedback rounds.

Novelty: Relative to g0016, replaces BM25 with the cross-adapter text-matching view [genome dense:row+xview:row+consensus:row|wsum|0].
Hypothesis: Fusing the dense cosine S, the cross-adapter text-matching view and each document's consensus with the dense top-K by a weighted sum should raise nDCG@10 on every task, because a second adapter votes where the retrieval views disagree; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks.
Parent: g0016
Genome: {"channels": {"dense": "row", "xview": "row", "consensus": "row"}, "fusion": "wsum", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import centroid
from embedding_ttc.programs.primitives.scores import candidate_mask, top_k_indices, zscore_rows

CONSENSUS_K = 10
CHANNEL_WEIGHTS = (1.0, 0.5, 0.5)


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    with ctx.index_time():
        docs_matching = ctx.encode_fn(list(ctx.doc_texts), "text-matching")
    queries_matching = ctx.encode_fn(list(ctx.query_texts), "text-matching")
    xview = queries_matching @ docs_matching.T
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    channels = [
        zscore_rows(S, mask),
        zscore_rows(xview, mask),
        zscore_rows(consensus, mask),
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for weight, channel in zip(CHANNEL_WEIGHTS, channels, strict=True):
        fused += np.float32(weight) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
