"""Structural program: dense + para_maxsim + consensus by a convex combination (weight 0.9 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0018, adds each document's consensus with the dense top-K (column-then-row z-scores); replaces BM25 with MaxSim over paragraphs [genome dense:row+para_maxsim:row+consensus:both|convex:0.9|0].
Hypothesis: Fusing the dense cosine S, MaxSim over paragraphs and each document's consensus with the dense top-K by a convex combination (weight 0.9 shared by the channels after the first) should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks.
Parent: g0018
Genome: {"channels": {"dense": "row", "para_maxsim": "row", "consensus": "both"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.9}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_paragraphs,
)
from embedding_ttc.programs.primitives.feedback import centroid
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.scores import (
    candidate_mask,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

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
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    channels = [
        zscore_rows(S, mask),
        zscore_rows(para_maxsim, mask),
        zscore_rows(zscore_cols(consensus, mask), mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
