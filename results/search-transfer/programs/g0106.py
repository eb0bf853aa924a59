"""Structural program: dense + xview + bigram + rare_idf + anti_hub by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0093, fuses by reciprocal rank fusion instead of a convex combination (weight 0.8 shared by the channels after the first); adds the cross-adapter text-matching view (column z-scores) [genome dense:row+xview:col+bigram:minmax+rare_idf:col+anti_hub:none|rrf|0].
Hypothesis: Fusing the dense cosine S, the cross-adapter text-matching view, word-bigram overlap, rare-term IDF and the distance from the candidates' centroid (a hubness correction) by reciprocal rank fusion should raise nDCG@10 on every task, because a second adapter votes where the retrieval views disagree; phrases matched in order are stronger evidence than single words; the rarest query terms identify the few documents that can answer; hub documents sit near every candidate set's centre and crowd every ranking.
Parent: g0093
Genome: {"channels": {"dense": "row", "xview": "col", "bigram": "minmax", "rare_idf": "col", "anti_hub": "none"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.lexical import bigram_overlap, rare_term_idf
from embedding_ttc.programs.primitives.scores import (
    RRF_K,
    ZSCORE_EPS,
    candidate_mask,
    rrf,
    zscore_cols,
    zscore_rows,
)

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
    with ctx.index_time():
        docs_matching = ctx.encode_fn(list(ctx.doc_texts), "text-matching")
    queries_matching = ctx.encode_fn(list(ctx.query_texts), "text-matching")
    xview = queries_matching @ docs_matching.T
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
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
        zscore_cols(xview, mask),
        _minmax_rows(bigram, mask),
        zscore_cols(rare_idf, mask),
        anti_hub,
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
