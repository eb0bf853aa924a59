"""Structural program: dense + bm25 + bigram by reciprocal rank fusion, 2 feedback rounds.

Novelty: Relative to g0029, fuses by reciprocal rank fusion instead of a sum of row z-scores; adds feedback round 2 (rocchio refinement of the fused top-K) [genome dense:row+bm25:row+bigram:minmax|rrf|2|rocchio].
Hypothesis: Fusing the dense cosine S, BM25 and word-bigram overlap by reciprocal rank fusion should raise nDCG@10 on every task, because BM25 rewards exact rare terms (names, numbers) that embeddings blur; phrases matched in order are stronger evidence than single words; 2 rocchio feedback rounds then pull each query toward its fused top-K.
Parent: g0029
Genome: {"channels": {"dense": "row", "bm25": "row", "bigram": "minmax"}, "fusion": "rrf", "rounds": 2, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import centroid, rocchio
from embedding_ttc.programs.primitives.lexical import BM25, bigram_overlap
from embedding_ttc.programs.primitives.scores import (
    RRF_K,
    bottom_k_indices,
    candidate_mask,
    minmax_rows,
    rrf,
    top_k_indices,
    zscore_rows,
)

FEEDBACK_K = 5
ROCCHIO_BETA = 0.6
ROCCHIO_GAMMA = 0.2


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
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    channels = [
        zscore_rows(S, mask),
        zscore_rows(bm25, mask),
        minmax_rows(bigram, mask),
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    query = Q
    # feedback round 1: refine the query from the fused top-K, rescore D
    query = _rocchio_query(query, D, fused, mask)
    fused = rrf([fused, query @ D.T], mask=mask, k=RRF_K)
    # feedback round 2: refine the query from the fused top-K, rescore D
    query = _rocchio_query(query, D, fused, mask)
    fused = rrf([fused, query @ D.T], mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
