"""Structural program: dense + bm25 + consensus by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0001, switches the dense cosine S to per-query min-max (was row z-scores); adds each document's consensus with the dense top-K (column-then-row z-scores) [genome dense:minmax+bm25:row+consensus:both|rrf|0].
Hypothesis: Fusing the dense cosine S, BM25 and each document's consensus with the dense top-K by reciprocal rank fusion should raise nDCG@10 on every task, because BM25 rewards exact rare terms (names, numbers) that embeddings blur; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks.
Parent: g0001
Genome: {"channels": {"dense": "minmax", "bm25": "row", "consensus": "both"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import centroid
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import (
    RRF_K,
    candidate_mask,
    minmax_rows,
    rrf,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

CONSENSUS_K = 10


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    channels = [
        minmax_rows(S, mask),
        zscore_rows(bm25, mask),
        zscore_rows(zscore_cols(consensus, mask), mask),
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
