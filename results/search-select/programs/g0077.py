"""Structural program: dense + para_maxsim by a convex combination (weight 0.9 shared by the channels after the first), 1 feedback round.

Novelty: Relative to g0046, drops the distance from the candidates' centroid (a hubness correction); replaces BM25 with word-bigram overlap; drops word-bigram overlap [genome dense:row+para_maxsim:col|convex:0.9|1|softcentroid].
Hypothesis: Fusing the dense cosine S and MaxSim over paragraphs by a convex combination (weight 0.9 shared by the channels after the first) should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; 1 softcentroid feedback round then pull each query toward its fused top-K.
Parent: g0046
Genome: {"channels": {"dense": "row", "para_maxsim": "col"}, "fusion": "convex", "rounds": 1, "refine": "softcentroid", "share": 0.9}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_paragraphs,
)
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_cols, zscore_rows

FEEDBACK_K = 5
SOFT_TAU = 1.0
SOFT_ALPHA = 0.5
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
    channels = [
        zscore_rows(S, mask),
        zscore_cols(para_maxsim, mask),
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
