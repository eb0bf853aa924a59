"""Structural program: dense + half_dim + para_maxsim + bigram + consensus by a weighted sum, 0 feedback rounds.

Novelty: Relative to g0089, switches MaxSim over paragraphs to row z-scores (was column z-scores); fuses by a weighted sum instead of a convex combination (weight 0.9 shared by the channels after the first); replaces BM25 with the Matryoshka half-dimension cosine [genome dense:row+half_dim:row+para_maxsim:row+bigram:col+consensus:none|wsum|0].
Hypothesis: Fusing the dense cosine S, the Matryoshka half-dimension cosine, MaxSim over paragraphs, word-bigram overlap and each document's consensus with the dense top-K by a weighted sum should raise nDCG@10 on every task, because the coarse prefix of the embedding ranks by topic and resists fine-grained noise; the best-matching part of a long document carries the evidence that one pooled vector dilutes; phrases matched in order are stronger evidence than single words; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks.
Parent: g0089
Genome: {"channels": {"dense": "row", "half_dim": "row", "para_maxsim": "row", "bigram": "col", "consensus": "none"}, "fusion": "wsum", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_paragraphs,
)
from embedding_ttc.programs.primitives.feedback import centroid
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.lexical import bigram_overlap
from embedding_ttc.programs.primitives.scores import (
    candidate_mask,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

NORM_FLOOR = 1e-12
CONSENSUS_K = 10
CHANNEL_WEIGHTS = (1.0, 0.5, 0.5, 0.5, 0.5)


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    half = max(1, Q.shape[1] // 2)
    q_half = Q[:, :half] / np.maximum(
        np.linalg.norm(Q[:, :half], axis=1, keepdims=True), NORM_FLOOR
    )
    d_half = D[:, :half] / np.maximum(
        np.linalg.norm(D[:, :half], axis=1, keepdims=True), NORM_FLOOR
    )
    half_dim = q_half @ d_half.T
    paragraphs = chunk_documents(
        ctx.doc_texts, split_paragraphs, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        paragraphs_vectors = ctx.encode_fn(paragraphs.texts, "retrieval.passage")
    para_maxsim = maxsim(Q, paragraphs_vectors, paragraphs.owner, n_d, mask=mask)
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    channels = [
        zscore_rows(S, mask),
        zscore_rows(half_dim, mask),
        zscore_rows(para_maxsim, mask),
        zscore_cols(bigram, mask),
        consensus,
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for weight, channel in zip(CHANNEL_WEIGHTS, channels, strict=True):
        fused += np.float32(weight) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
