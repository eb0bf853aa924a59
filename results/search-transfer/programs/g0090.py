"""Structural program: dense + bigram + coverage + rare_idf by a sum of row z-scores, 1 feedback round.

Novelty: Relative to g0089, fuses by a sum of row z-scores instead of a convex combination (weight 0.8 shared by the channels after the first) [genome dense:row+bigram:minmax+coverage:row+rare_idf:col|zsum|1|softcentroid].
Hypothesis: Fusing the dense cosine S, word-bigram overlap, query-term coverage and rare-term IDF by a sum of row z-scores should raise nDCG@10 on every task, because phrases matched in order are stronger evidence than single words; documents that cover every query term answer the whole query; the rarest query terms identify the few documents that can answer; 1 softcentroid feedback round then pull each query toward its fused top-K.
Parent: g0089
Genome: {"channels": {"dense": "row", "bigram": "minmax", "coverage": "row", "rare_idf": "col"}, "fusion": "zsum", "rounds": 1, "refine": "softcentroid"}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import (
    bigram_overlap,
    query_term_coverage,
    rare_term_idf,
)
from embedding_ttc.programs.primitives.scores import (
    ZSCORE_EPS,
    candidate_mask,
    zscore_cols,
    zscore_rows,
)

FEEDBACK_K = 5
SOFT_TAU = 1.0
SOFT_ALPHA = 0.5


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
    coverage = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
    channels = [
        zscore_rows(S, mask),
        _minmax_rows(bigram, mask),
        zscore_rows(coverage, mask),
        zscore_cols(rare_idf, mask),
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for channel in channels:
        fused += zscore_rows(channel, mask)
    query = Q
    # feedback round 1: refine the query from the fused top-K, rescore D
    query = soft_centroid_query(
        query, D, zscore_rows(fused, mask), k=FEEDBACK_K, tau=SOFT_TAU, alpha=SOFT_ALPHA, mask=mask
    )
    fused = zscore_rows(fused, mask) + zscore_rows(query @ D.T, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
