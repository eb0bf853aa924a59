"""Structural program: dense + para_maxsim + bigram + prf_rocchio + consensus by a convex combination (weight 0.9 shared by the channels after the first), 1 feedback round.

Novelty: Relative to g0089, switches word-bigram overlap to column-then-row z-scores (was column z-scores); adds feedback round 1 (softcentroid refinement of the fused top-K); replaces BM25 with a Rocchio-refined query [genome dense:row+para_maxsim:col+bigram:both+prf_rocchio:row+consensus:none|convex:0.9|1|softcentroid].
Hypothesis: Fusing the dense cosine S, MaxSim over paragraphs, word-bigram overlap, a Rocchio-refined query and each document's consensus with the dense top-K by a convex combination (weight 0.9 shared by the channels after the first) should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; phrases matched in order are stronger evidence than single words; the top documents describe the query's intent better than its few words; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks; 1 softcentroid feedback round then pull each query toward its fused top-K.
Parent: g0089
Genome: {"channels": {"dense": "row", "para_maxsim": "col", "bigram": "both", "prf_rocchio": "row", "consensus": "none"}, "fusion": "convex", "rounds": 1, "refine": "softcentroid", "share": 0.9}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_paragraphs,
)
from embedding_ttc.programs.primitives.feedback import centroid, rocchio, soft_centroid_query
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.lexical import bigram_overlap
from embedding_ttc.programs.primitives.scores import (
    bottom_k_indices,
    candidate_mask,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

FEEDBACK_K = 5
ROCCHIO_BETA = 0.6
ROCCHIO_GAMMA = 0.2
CONSENSUS_K = 10
SOFT_TAU = 1.0
SOFT_ALPHA = 0.5
FUSION_SHARE = 0.9


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
    prf_rocchio = _rocchio_query(Q, D, S, mask) @ D.T
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    channels = [
        zscore_rows(S, mask),
        zscore_cols(para_maxsim, mask),
        zscore_rows(zscore_cols(bigram, mask), mask),
        zscore_rows(prf_rocchio, mask),
        consensus,
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    query = Q
    # feedback round 1: refine the query from the fused top-K, rescore D
    query = soft_centroid_query(
        query, D, zscore_rows(fused, mask), k=FEEDBACK_K, tau=SOFT_TAU, alpha=SOFT_ALPHA, mask=mask
    )
    fused = zscore_rows(fused, mask) + zscore_rows(query @ D.T, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
