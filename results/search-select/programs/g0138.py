"""Structural program: dense + half_dim + para_maxsim + bigram + anti_hub by a convex combination (weight 0.8 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0089, changes MaxSim over paragraphs to MaxSim over sentences; moves the share of the channels after the first from 0.9 to 0.8; replaces each document's consensus with the dense top-K with the distance from the candidates' centroid (a hubness correction); changes MaxSim over sentences to MaxSim over paragraphs; replaces BM25 with the Matryoshka half-dimension cosine [genome dense:row+half_dim:row+para_maxsim:col+bigram:col+anti_hub:none|convex:0.8|0].
Hypothesis: Fusing the dense cosine S, the Matryoshka half-dimension cosine, MaxSim over paragraphs, word-bigram overlap and the distance from the candidates' centroid (a hubness correction) by a convex combination (weight 0.8 shared by the channels after the first) should raise nDCG@10 on every task, because the coarse prefix of the embedding ranks by topic and resists fine-grained noise; the best-matching part of a long document carries the evidence that one pooled vector dilutes; phrases matched in order are stronger evidence than single words; hub documents sit near every candidate set's centre and crowd every ranking.
Parent: g0089
Genome: {"channels": {"dense": "row", "half_dim": "row", "para_maxsim": "col", "bigram": "col", "anti_hub": "none"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.8}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_paragraphs,
)
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.lexical import bigram_overlap
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_cols, zscore_rows

NORM_FLOOR = 1e-12
FUSION_SHARE = 0.8


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
    members = np.ones((1, n_d), dtype=np.float32)
    if mask is not None:
        members = mask.astype(np.float32)
    pool_centroids = members @ D
    pool_centroids /= np.maximum(
        np.linalg.norm(pool_centroids, axis=1, keepdims=True), NORM_FLOOR
    )
    anti_hub = np.broadcast_to(-(pool_centroids @ D.T), (n_q, n_d)).copy()
    channels = [
        zscore_rows(S, mask),
        zscore_rows(half_dim, mask),
        zscore_cols(para_maxsim, mask),
        zscore_cols(bigram, mask),
        anti_hub,
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
