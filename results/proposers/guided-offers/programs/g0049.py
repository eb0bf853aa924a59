"""Structural program: pair_topmean + bm25 + coverage + prf_rocchio + anti_hub by reciprocal rank fusion, 1 feedback round.

Novelty: Relative to g0027, replaces rare-term IDF with a Rocchio-refined query [genome pair_topmean:row+bm25:row+coverage:row+prf_rocchio:row+anti_hub:both|rrf|1|softcentroid].
Hypothesis: Replacing the rare-term IDF with a Rocchio-refined query could potentially raise nDCG@10 for the aila_statutes task by aligning the dense features with the query normalization. This change aligns the dense features with the query normalization, making it easier to identify the most relevant parts of
Parent: g0027
Genome: {"channels": {"pair_topmean": "row", "bm25": "row", "coverage": "row", "prf_rocchio": "row", "anti_hub": "both"}, "fusion": "rrf", "rounds": 1, "refine": "softcentroid"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    sentence_pairs,
    split_sentences,
)
from embedding_ttc.programs.primitives.feedback import centroid, rocchio, soft_centroid_query
from embedding_ttc.programs.primitives.late import topmeansim
from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage
from embedding_ttc.programs.primitives.scores import (
    RRF_K,
    bottom_k_indices,
    candidate_mask,
    rrf,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

FEEDBACK_K = 5
ROCCHIO_BETA = 0.6
ROCCHIO_GAMMA = 0.2
NORM_FLOOR = 1e-12
SOFT_TAU = 1.0
SOFT_ALPHA = 0.5


def _rocchio_query(query, D, scores, mask):
    """Rocchio (1971): toward the top-K centroid, away from the bottom-K centroid."""
    top = top_k_indices(scores, FEEDBACK_K, mask)
    bottom = bottom_k_indices(scores, FEEDBACK_K, mask)
    positive = np.array([centroid(D, rows) for rows in top], dtype=np.float32)
    negative = np.array([centroid(D, rows) for rows in bottom], dtype=np.float32)
    return rocchio(
        query,
        positive.reshape(query.shape),
        negative.reshape(query.shape),
        alpha=1.0,
        beta=ROCCHIO_BETA,
        gamma=ROCCHIO_GAMMA,
    )


def _sentence_pairs(text):
    """Consecutive sentence pairs of a text."""
    return sentence_pairs(split_sentences(text))


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    pairs = chunk_documents(
        ctx.doc_texts, _sentence_pairs, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        pairs_vectors = ctx.encode_fn(pairs.texts, "retrieval.passage")
    pair_topmean = topmeansim(Q, pairs_vectors, pairs.owner, n_d, mask=mask)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    coverage = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    prf_rocchio = _rocchio_query(Q, D, S, mask) @ D.T
    members = np.ones((1, n_d), dtype=np.float32)
    if mask is not None:
        members = mask.astype(np.float32)
    pool_centroids = members @ D
    pool_centroids /= np.maximum(
        np.linalg.norm(pool_centroids, axis=1, keepdims=True), NORM_FLOOR
    )
    anti_hub = np.broadcast_to(-(pool_centroids @ D.T), (n_q, n_d)).copy()
    channels = [
        zscore_rows(pair_topmean, mask),
        zscore_rows(bm25, mask),
        zscore_rows(coverage, mask),
        zscore_rows(prf_rocchio, mask),
        zscore_rows(zscore_cols(anti_hub, mask), mask),
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
