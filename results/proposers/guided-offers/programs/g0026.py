"""Structural program: sent_topmean + bm25 + coverage + rare_idf + anti_hub by reciprocal rank fusion, 1 feedback round.

Novelty: Relative to g0025, replaces word-bigram overlap with TopMeanSim over sentences [genome sent_topmean:row+bm25:row+coverage:row+rare_idf:row+anti_hub:both|rrf|1|softcentroid].
Hypothesis: Replacing word-bigram overlap with TopMeanSim over sentences could potentially raise nDCG@10 for the aila_statutes task by aligning the dense features with the query normalization. This change aligns the dense features with the best-matching part of a long document, which carries the evidence that a
Parent: g0025
Genome: {"channels": {"sent_topmean": "row", "bm25": "row", "coverage": "row", "rare_idf": "row", "anti_hub": "both"}, "fusion": "rrf", "rounds": 1, "refine": "softcentroid"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_sentences,
)
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.late import topmeansim
from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage, rare_term_idf
from embedding_ttc.programs.primitives.scores import (
    RRF_K,
    candidate_mask,
    rrf,
    zscore_cols,
    zscore_rows,
)

NORM_FLOOR = 1e-12
FEEDBACK_K = 5
SOFT_TAU = 1.0
SOFT_ALPHA = 0.5


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    sentences = chunk_documents(
        ctx.doc_texts, split_sentences, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        sentences_vectors = ctx.encode_fn(sentences.texts, "retrieval.passage")
    sent_topmean = topmeansim(Q, sentences_vectors, sentences.owner, n_d, mask=mask)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    coverage = query_term_coverage(ctx.query_texts, ctx.doc_texts)
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
        zscore_rows(sent_topmean, mask),
        zscore_rows(bm25, mask),
        zscore_rows(coverage, mask),
        zscore_rows(rare_idf, mask),
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
