"""Structural program: dense + bigram + rare_idf + consensus + anti_hub by a convex combination (weight 0.8 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0093, adds each document's consensus with the dense top-K (z-scores over the dense top-K) [genome dense:row+bigram:minmax+rare_idf:col+consensus:local+anti_hub:none|convex:0.8|0].
Hypothesis: Fusing the dense cosine S, word-bigram overlap, rare-term IDF, each document's consensus with the dense top-K and the distance from the candidates' centroid (a hubness correction) by a convex combination (weight 0.8 shared by the channels after the first) should raise nDCG@10 on every task, because phrases matched in order are stronger evidence than single words; the rarest query terms identify the few documents that can answer; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks; hub documents sit near every candidate set's centre and crowd every ranking.
Parent: g0093
Genome: {"channels": {"dense": "row", "bigram": "minmax", "rare_idf": "col", "consensus": "local", "anti_hub": "none"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.8}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import centroid
from embedding_ttc.programs.primitives.lexical import bigram_overlap, rare_term_idf
from embedding_ttc.programs.primitives.scores import (
    ZSCORE_EPS,
    candidate_mask,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

CONSENSUS_K = 10
LOCAL_K = 20
NORM_FLOOR = 1e-12
FUSION_SHARE = 0.8


def _local_zscore(scores, dense, mask):
    """Z-scores by the mean and deviation of each query's top LOCAL_K candidates under dense.

    Candidates outside that head are clipped to the head's range of z-scores (the range holds
    0, the head's mean); a head without spread gives 0; non-candidates are 0.
    """
    cand = np.ones(np.shape(scores), dtype=bool) if mask is None else mask
    x = np.where(cand, scores, 0.0).astype(np.float64)
    head = np.zeros(x.shape, dtype=bool)
    for row, top in enumerate(top_k_indices(dense, LOCAL_K, mask)):
        head[row, top] = True
    size = np.maximum(head.sum(axis=1, keepdims=True), 1)
    mean = np.where(head, x, 0.0).sum(axis=1, keepdims=True) / size
    dev = np.where(head, x - mean, 0.0)
    std = np.sqrt((dev * dev).sum(axis=1, keepdims=True) / size)
    spread = std > ZSCORE_EPS
    z = np.where(spread, (x - mean) / np.where(spread, std, 1.0), 0.0)
    low = z.min(axis=1, keepdims=True, where=head, initial=0.0)
    high = z.max(axis=1, keepdims=True, where=head, initial=0.0)
    z = np.where(head, z, np.clip(z, low, high))
    return np.where(cand, z, 0.0).astype(np.float32)


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
        _local_zscore(consensus, S, mask),
        anti_hub,
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
