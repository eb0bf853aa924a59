"""Structural program: dense + para_maxsim + bm25 + consensus by a convex combination (weight 0.9 shared by the channels after the first), 1 feedback round.

Novelty: Relative to g0089, adds feedback round 1 (rocchio refinement of the fused top-K); drops feedback round 1; drops word-bigram overlap; adds feedback round 1 (vprf refinement of the fused top-K) [genome dense:row+para_maxsim:col+bm25:row+consensus:none|convex:0.9|1|vprf].
Hypothesis: Fusing the dense cosine S, MaxSim over paragraphs, BM25 and each document's consensus with the dense top-K by a convex combination (weight 0.9 shared by the channels after the first) should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; BM25 rewards exact rare terms (names, numbers) that embeddings blur; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks; 1 vprf feedback round then pull each query toward its fused top-K.
Parent: g0089
Genome: {"channels": {"dense": "row", "para_maxsim": "col", "bm25": "row", "consensus": "none"}, "fusion": "convex", "rounds": 1, "refine": "vprf", "share": 0.9}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_paragraphs,
)
from embedding_ttc.programs.primitives.feedback import centroid, vprf_update
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import (
    candidate_mask,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

CONSENSUS_K = 10
FEEDBACK_K = 5
VPRF_BETA = 0.3
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
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    channels = [
        zscore_rows(S, mask),
        zscore_cols(para_maxsim, mask),
        zscore_rows(bm25, mask),
        consensus,
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    query = Q
    # feedback round 1: refine the query from the fused top-K, rescore D
    query = vprf_update(query, D, top_k_indices(fused, FEEDBACK_K, mask), VPRF_BETA)
    fused = zscore_rows(fused, mask) + zscore_rows(query @ D.T, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
