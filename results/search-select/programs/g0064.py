"""Structural program: xview + para_topmean + bm25 + anti_hub by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0046, fuses by reciprocal rank fusion instead of a convex combination (weight 0.9 shared by the channels after the first); drops the dense cosine S; changes MaxSim over paragraphs to TopMeanSim over paragraphs; drops feedback round 1; adds the cross-adapter text-matching view (column z-scores) [genome xview:col+para_topmean:col+bm25:row+anti_hub:minmax|rrf|0].
Hypothesis: Fusing the cross-adapter text-matching view, TopMeanSim over paragraphs, BM25 and the distance from the candidates' centroid (a hubness correction) by reciprocal rank fusion should raise nDCG@10 on every task, because a second adapter votes where the retrieval views disagree; the best-matching part of a long document carries the evidence that one pooled vector dilutes; BM25 rewards exact rare terms (names, numbers) that embeddings blur; hub documents sit near every candidate set's centre and crowd every ranking.
Parent: g0046
Genome: {"channels": {"xview": "col", "para_topmean": "col", "bm25": "row", "anti_hub": "minmax"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_paragraphs,
)
from embedding_ttc.programs.primitives.late import topmeansim
from embedding_ttc.programs.primitives.lexical import BM25
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
    paragraphs = chunk_documents(
        ctx.doc_texts, split_paragraphs, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        paragraphs_vectors = ctx.encode_fn(paragraphs.texts, "retrieval.passage")
    para_topmean = topmeansim(Q, paragraphs_vectors, paragraphs.owner, n_d, mask=mask)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    members = np.ones((1, n_d), dtype=np.float32)
    if mask is not None:
        members = mask.astype(np.float32)
    pool_centroids = members @ D
    pool_centroids /= np.maximum(
        np.linalg.norm(pool_centroids, axis=1, keepdims=True), NORM_FLOOR
    )
    anti_hub = np.broadcast_to(-(pool_centroids @ D.T), (n_q, n_d)).copy()
    channels = [
        zscore_cols(xview, mask),
        zscore_cols(para_topmean, mask),
        zscore_rows(bm25, mask),
        _minmax_rows(anti_hub, mask),
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
