"""Structural program: dense + bigram + rare_idf + prf_soft + consensus by a convex combination (weight 0.8 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0093, replaces the distance from the candidates' centroid (a hubness correction) with a SoftCentroid-refined query; adds each document's consensus with the dense top-K (column z-scores) [genome dense:row+bigram:minmax+rare_idf:col+prf_soft:none+consensus:col|convex:0.8|0].
Hypothesis: Fusing the dense cosine S, word-bigram overlap, rare-term IDF, a SoftCentroid-refined query and each document's consensus with the dense top-K by a convex combination (weight 0.8 shared by the channels after the first) should raise nDCG@10 on every task, because phrases matched in order are stronger evidence than single words; the rarest query terms identify the few documents that can answer; a score-weighted centroid of the top documents sharpens the query; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks.
Parent: g0093
Genome: {"channels": {"dense": "row", "bigram": "minmax", "rare_idf": "col", "prf_soft": "none", "consensus": "col"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.8}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import centroid, soft_centroid_query
from embedding_ttc.programs.primitives.lexical import bigram_overlap, rare_term_idf
from embedding_ttc.programs.primitives.scores import (
    ZSCORE_EPS,
    candidate_mask,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

CONSENSUS_K = 10
FUSION_SHARE = 0.8


def _minmax_rows(scores, mask):
    """Min-max over each query's candidates: its best candidate 1, its worst 0.

    A query whose candidates span at most ZSCORE_EPS (one candidate, a constant row) is all 0,
    as the z-scores treat a row without spread; non-candidates are 0.
    """
    cand = np.ones(np.shape(scores), dtype=bool) if mask is None else mask
    x = np.where(cand, scores, 0.0).astype(np.float64)
    low = x.min(axis=1, keepdims=True, where=cand, initial=np.inf)
    high = x.max(axis=1, keepdims=True, where=cand, initial=-np.inf)
    span = high - low
    spread = span > ZSCORE_EPS
    scaled = np.where(spread, (x - low) / np.where(spread, span, 1.0), 0.0)
    return np.where(cand, scaled, 0.0).astype(np.float32)


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
    prf_soft = soft_centroid_query(Q, D, S, mask=mask) @ D.T
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    channels = [
        zscore_rows(S, mask),
        _minmax_rows(bigram, mask),
        zscore_cols(rare_idf, mask),
        prf_soft,
        zscore_cols(consensus, mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
