"""Structural program: dense + xview + bm25 + consensus by a weighted sum, 1 feedback round.

Novelty: Relative to g0028, adds feedback round 1 (softcentroid refinement of the fused top-K) [genome dense:row+xview:col+bm25:row+consensus:row|wsum|1|softcentroid].
Hypothesis: Fusing the dense cosine S, the cross-adapter text-matching view, BM25 and each document's consensus with the dense top-K by a weighted sum should raise nDCG@10 on every task, because a second adapter votes where the retrieval views disagree; BM25 rewards exact rare terms (names, numbers) that embeddings blur; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks; 1 softcentroid feedback round then pull each query toward its fused top-K.
Parent: g0028
Genome: {"channels": {"dense": "row", "xview": "col", "bm25": "row", "consensus": "row"}, "fusion": "wsum", "rounds": 1, "refine": "softcentroid"}
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
FEEDBACK_K = 5
SOFT_TAU = 1.0
SOFT_ALPHA = 0.5
CHANNEL_WEIGHTS = (1.0, 0.5, 0.5, 0.5)


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    with ctx.index_time():
        docs_matching = ctx.encode_fn(list(ctx.doc_texts), "text-matching")
    queries_matching = ctx.encode_fn(list(ctx.query_texts), "text-matching")
    xview = queries_matching @ docs_matching.T
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    channels = [
        zscore_rows(S, mask),
        zscore_cols(xview, mask),
        zscore_rows(bm25, mask),
        zscore_rows(consensus, mask),
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for weight, channel in zip(CHANNEL_WEIGHTS, channels, strict=True):
        fused += np.float32(weight) * channel
    query = Q
    # feedback round 1: refine the query from the fused top-K, rescore D
    query = soft_centroid_query(
        query, D, zscore_rows(fused, mask), k=FEEDBACK_K, tau=SOFT_TAU, alpha=SOFT_ALPHA, mask=mask
    )
    fused = zscore_rows(fused, mask) + zscore_rows(query @ D.T, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
