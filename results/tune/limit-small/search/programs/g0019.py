"""Structural program: bm25 + coverage + rare_idf + consensus by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0015, adds each document's consensus with the dense top-K (row z-scores) [genome bm25:row+coverage:none+rare_idf:none+consensus:row|rrf|0].
Hypothesis: Fusing BM25, query-term coverage, rare-term IDF and each document's consensus with the dense top-K by reciprocal rank fusion should raise nDCG@10 on every task, because BM25 rewards exact rare terms (names, numbers) that embeddings blur; documents that cover every query term answer the whole query; the rarest query terms identify the few documents that can answer; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks.
Parent: g0015
Genome: {"channels": {"bm25": "row", "coverage": "none", "rare_idf": "none", "consensus": "row"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import centroid
from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage, rare_term_idf
from embedding_ttc.programs.primitives.scores import (
    RRF_K,
    candidate_mask,
    rrf,
    top_k_indices,
    zscore_rows,
)

CONSENSUS_K = 10


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    coverage = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    channels = [
        zscore_rows(bm25, mask),
        coverage,
        rare_idf,
        zscore_rows(consensus, mask),
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
