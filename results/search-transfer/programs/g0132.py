"""Structural program: bm25 + bigram + rare_idf by a sum of row z-scores, 0 feedback rounds.

Novelty: Relative to g0093, drops the dense cosine S; drops the distance from the candidates' centroid (a hubness correction); adds BM25 (per-query min-max); fuses by a sum of row z-scores instead of a convex combination (weight 0.8 shared by the channels after the first) [genome bm25:minmax+bigram:minmax+rare_idf:col|zsum|0].
Hypothesis: Fusing BM25, word-bigram overlap and rare-term IDF by a sum of row z-scores should raise nDCG@10 on every task, because BM25 rewards exact rare terms (names, numbers) that embeddings blur; phrases matched in order are stronger evidence than single words; the rarest query terms identify the few documents that can answer.
Parent: g0093
Genome: {"channels": {"bm25": "minmax", "bigram": "minmax", "rare_idf": "col"}, "fusion": "zsum", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.lexical import BM25, bigram_overlap, rare_term_idf
from embedding_ttc.programs.primitives.scores import (
    ZSCORE_EPS,
    candidate_mask,
    zscore_cols,
    zscore_rows,
)


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
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
    channels = [
        _minmax_rows(bm25, mask),
        _minmax_rows(bigram, mask),
        zscore_cols(rare_idf, mask),
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for channel in channels:
        fused += zscore_rows(channel, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
