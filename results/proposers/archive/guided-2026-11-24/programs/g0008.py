"""Structural program: dense + half_dim + bm25 + consensus by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0001, adds the Matryoshka half-dimension cosine (row z-scores); adds each document's consensus with the dense top-K (column-then-row z-scores); (the chosen change alone repeats a known program) [genome dense:row+half_dim:row+bm25:row+consensus:both|rrf|0].
Hypothesis: The addition of the Matryoshka half-dimension cosine channel (row z-scores) to the retrieval program could potentially raise nDCG@10 on every task because this channel effectively normalizes the relevance of the cosine scores, making it more consistent and easier to compare documents across tasks.
Parent: g0001
Genome: {"channels": {"dense": "row", "half_dim": "row", "bm25": "row", "consensus": "both"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import centroid
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import (
    RRF_K,
    candidate_mask,
    rrf,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

NORM_FLOOR = 1e-12
CONSENSUS_K = 10


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    half = max(1, Q.shape[1] // 2)
    q_half = Q[:, :half] / np.maximum(
        np.linalg.norm(Q[:, :half], axis=1, keepdims=True), NORM_FLOOR
    )
    d_half = D[:, :half] / np.maximum(
        np.linalg.norm(D[:, :half], axis=1, keepdims=True), NORM_FLOOR
    )
    half_dim = q_half @ d_half.T
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    channels = [
        zscore_rows(S, mask),
        zscore_rows(half_dim, mask),
        zscore_rows(bm25, mask),
        zscore_rows(zscore_cols(consensus, mask), mask),
    ]
    fused = rrf(channels, mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
