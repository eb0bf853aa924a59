"""Structural program: dense + bigram + rare_idf by a convex combination (weight 0.7 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0093, moves the share of the channels after the first from 0.8 to 0.7; drops the distance from the candidates' centroid (a hubness correction) [genome dense:row+bigram:minmax+rare_idf:col|convex:0.7|0].
Hypothesis: Fusing the dense cosine S, word-bigram overlap and rare-term IDF by a convex combination (weight 0.7 shared by the channels after the first) should raise nDCG@10 on every task, because phrases matched in order are stronger evidence than single words; the rarest query terms identify the few documents that can answer.
Parent: g0093
Genome: {"channels": {"dense": "row", "bigram": "minmax", "rare_idf": "col"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.7}
"""

import numpy as np

from embedding_ttc.programs.primitives.lexical import bigram_overlap, rare_term_idf
from embedding_ttc.programs.primitives.scores import (
    ZSCORE_EPS,
    candidate_mask,
    zscore_cols,
    zscore_rows,
)

FUSION_SHARE = 0.7


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
    channels = [
        zscore_rows(S, mask),
        _minmax_rows(bigram, mask),
        zscore_cols(rare_idf, mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
