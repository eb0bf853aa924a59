"""Structural program: dense + bigram + rare_idf + consensus + anti_hub by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0093, adds each document's consensus with the dense top-K (column z-scores); moves the share of the channels after the first from 0.8 to 0.7; fuses by reciprocal rank fusion instead of a convex combination (weight 0.7 shared by the channels after the first) [genome dense:row+bigram:minmax+rare_idf:col+consensus:col+anti_hub:none|rrf|0].
Hypothesis: Fusing the dense cosine S, word-bigram overlap, rare-term IDF, each document's consensus with the dense top-K and the distance from the candidates' centroid (a hubness correction) by reciprocal rank fusion should raise nDCG@10 on every task, because phrases matched in order are stronger evidence than single words; the rarest query terms identify the few documents that can answer; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks; hub documents sit near every candidate set's centre and crowd every ranking.
Parent: g0093
Genome: {"channels": {"dense": "row", "bigram": "minmax", "rare_idf": "col", "consensus": "col", "anti_hub": "none"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import centroid
from embedding_ttc.programs.primitives.lexical import bigram_overlap, rare_term_idf
from embedding_ttc.programs.primitives.scores import (
    RRF_K,
    ZSCORE_EPS,
    candidate_mask,
    rrf,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

CONSENSUS_K = 10
NORM_FLOOR = 1e-12


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
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    members = np.ones((1, n_d), dtype=np.float32)
    if mask is not None:
        members = mask.astype(np.float32)
    pool_centroids = members @ D
    pool_centroids /= np.maximum(
        np.linalg.norm(pool_centroids, axis=1, keepdims=True), NORM_FLOOR
    )
    anti_hub = np.broadcast_to(-(pool_centroids @ D.T), (n_q, n_d)).copy()
    channels = [
        zscore_rows(S, mask),
        _minmax_rows(bigram, mask),
        zscore_cols(rare_idf, mask),
        zscore_cols(consensus, mask),
        anti_hub,
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
