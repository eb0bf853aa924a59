"""Structural program: bm25 + bigram + coverage + rare_idf + prf_vprf by reciprocal rank fusion, 1 feedback round.

Novelty: Relative to g0016, adds a VPRF-refined query (z-scores over the dense top-K) [genome bm25:row+bigram:row+coverage:row+rare_idf:row+prf_vprf:local|rrf|1|softcentroid].
Hypothesis: Adding a VPRF-refined query (z-scores over the dense top-K) could potentially raise nDCG@10 for the aila_statutes task by aligning the dense features with the query normalization. This change aligns the dense features with the q…
Parent: g0016
Genome: {"channels": {"bm25": "row", "bigram": "row", "coverage": "row", "rare_idf": "row", "prf_vprf": "local"}, "fusion": "rrf", "rounds": 1, "refine": "softcentroid"}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import soft_centroid_query, vprf_update
from embedding_ttc.programs.primitives.lexical import (
    BM25,
    bigram_overlap,
    query_term_coverage,
    rare_term_idf,
)
from embedding_ttc.programs.primitives.scores import (
    RRF_K,
    ZSCORE_EPS,
    candidate_mask,
    rrf,
    top_k_indices,
    zscore_rows,
)

FEEDBACK_K = 5
VPRF_BETA = 0.3
LOCAL_K = 20
SOFT_TAU = 1.0
SOFT_ALPHA = 0.5


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


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    coverage = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
    prf_vprf = vprf_update(Q, D, top_k_indices(S, FEEDBACK_K, mask), VPRF_BETA) @ D.T
    channels = [
        zscore_rows(bm25, mask),
        zscore_rows(bigram, mask),
        zscore_rows(coverage, mask),
        zscore_rows(rare_idf, mask),
        _local_zscore(prf_vprf, S, mask),
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    query = Q
    # feedback round 1: refine the query from the fused top-K, rescore D
    query = soft_centroid_query(
        query, D, zscore_rows(fused, mask), k=FEEDBACK_K, tau=SOFT_TAU, alpha=SOFT_ALPHA, mask=mask
    )
    fused = rrf([fused, query @ D.T], mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
