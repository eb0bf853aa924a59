"""Structural program: dense + bm25 + prf_rocchio by a convex combination (weight 0.5 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0005, adds a Rocchio-refined query (raw scores); (every single edit of g0007 is tried; the next open parent) [genome dense:row+bm25:row+prf_rocchio:none|convex:0.5|0].
Hypothesis: Adding a Rocchio-refined query (raw scores) improves nDCG@10 by reducing noise and aligning the cosine vectors with the topic distribution, which can improve the relevancy of the documents.
Parent: g0005
Genome: {"channels": {"dense": "row", "bm25": "row", "prf_rocchio": "none"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.5}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import centroid, rocchio
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import (
    bottom_k_indices,
    candidate_mask,
    top_k_indices,
    zscore_rows,
)

FEEDBACK_K = 5
ROCCHIO_BETA = 0.6
ROCCHIO_GAMMA = 0.2
FUSION_SHARE = 0.5


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
    prf_rocchio = _rocchio_query(Q, D, S, mask) @ D.T
    channels = [
        zscore_rows(S, mask),
        zscore_rows(bm25, mask),
        prf_rocchio,
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
