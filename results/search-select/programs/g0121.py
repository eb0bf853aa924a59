"""Structural program: para_maxsim + bigram + prf_vprf + consensus by a convex combination (weight 0.9 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0089, drops the dense cosine S; drops BM25; adds a VPRF-refined query (column z-scores) [genome para_maxsim:col+bigram:col+prf_vprf:col+consensus:none|convex:0.9|0].
Hypothesis: Fusing MaxSim over paragraphs, word-bigram overlap, a VPRF-refined query and each document's consensus with the dense top-K by a convex combination (weight 0.9 shared by the channels after the first) should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; phrases matched in order are stronger evidence than single words; a uniform mean of the top documents pulls the query toward the relevant cluster; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks.
Parent: g0089
Genome: {"channels": {"para_maxsim": "col", "bigram": "col", "prf_vprf": "col", "consensus": "none"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.9}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_paragraphs,
)
from embedding_ttc.programs.primitives.feedback import centroid, vprf_update
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.lexical import bigram_overlap
from embedding_ttc.programs.primitives.scores import candidate_mask, top_k_indices, zscore_cols

FEEDBACK_K = 5
VPRF_BETA = 0.3
CONSENSUS_K = 10
FUSION_SHARE = 0.9


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    paragraphs = chunk_documents(
        ctx.doc_texts, split_paragraphs, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        paragraphs_vectors = ctx.encode_fn(paragraphs.texts, "retrieval.passage")
    para_maxsim = maxsim(Q, paragraphs_vectors, paragraphs.owner, n_d, mask=mask)
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    prf_vprf = vprf_update(Q, D, top_k_indices(S, FEEDBACK_K, mask), VPRF_BETA) @ D.T
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    channels = [
        zscore_cols(para_maxsim, mask),
        zscore_cols(bigram, mask),
        zscore_cols(prf_vprf, mask),
        consensus,
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
