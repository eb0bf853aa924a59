"""Structural program: dense + coverage + consensus by a convex combination (weight 0.6 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0018, replaces BM25 with query-term coverage; adds the distance from the candidates' centroid (a hubness correction) (per-query min-max); drops the distance from the candidates' centroid (a hubness correction); adds each document's consensus with the dense top-K (column-then-row z-scores) [genome dense:row+coverage:row+consensus:both|convex:0.6|0].
Hypothesis: Fusing the dense cosine S, query-term coverage and each document's consensus with the dense top-K by a convex combination (weight 0.6 shared by the channels after the first) should raise nDCG@10 on every task, because documents that cover every query term answer the whole query; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks.
Parent: g0018
Genome: {"channels": {"dense": "row", "coverage": "row", "consensus": "both"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.6}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import centroid
from embedding_ttc.programs.primitives.lexical import query_term_coverage
from embedding_ttc.programs.primitives.scores import (
    candidate_mask,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

CONSENSUS_K = 10
FUSION_SHARE = 0.6


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    coverage = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    channels = [
        zscore_rows(S, mask),
        zscore_rows(coverage, mask),
        zscore_rows(zscore_cols(consensus, mask), mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
