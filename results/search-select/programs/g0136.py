"""Structural program: dense + bm25 + bigram + coverage + consensus by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0089, fuses by reciprocal rank fusion instead of a convex combination (weight 0.9 shared by the channels after the first); replaces MaxSim over paragraphs with query-term coverage [genome dense:row+bm25:row+bigram:col+coverage:col+consensus:none|rrf|0].
Hypothesis: Fusing the dense cosine S, BM25, word-bigram overlap, query-term coverage and each document's consensus with the dense top-K by reciprocal rank fusion should raise nDCG@10 on every task, because BM25 rewards exact rare terms (names, numbers) that embeddings blur; phrases matched in order are stronger evidence than single words; documents that cover every query term answer the whole query; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks.
Parent: g0089
Genome: {"channels": {"dense": "row", "bm25": "row", "bigram": "col", "coverage": "col", "consensus": "none"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import centroid
from embedding_ttc.programs.primitives.lexical import BM25, bigram_overlap, query_term_coverage
from embedding_ttc.programs.primitives.scores import (
    RRF_K,
    candidate_mask,
    rrf,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

CONSENSUS_K = 10


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    coverage = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    channels = [
        zscore_rows(S, mask),
        zscore_rows(bm25, mask),
        zscore_cols(bigram, mask),
        zscore_cols(coverage, mask),
        consensus,
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
