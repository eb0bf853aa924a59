"""Structural program: dense + reverse + para_maxsim + prf_soft by a convex combination (weight 0.8 shared by the channels after the first), 1 feedback round.

Novelty: Relative to g0089, adds feedback round 1 (softcentroid refinement of the fused top-K); drops each document's consensus with the dense top-K; moves the share of the channels after the first from 0.9 to 0.8; replaces word-bigram overlap with a SoftCentroid-refined query; replaces BM25 with the reversed perspective (documents encoded as queries) [genome dense:row+reverse:row+para_maxsim:col+prf_soft:col|convex:0.8|1|softcentroid].
Hypothesis: Fusing the dense cosine S, the reversed perspective (documents encoded as queries), MaxSim over paragraphs and a SoftCentroid-refined query by a convex combination (weight 0.8 shared by the channels after the first) should raise nDCG@10 on every task, because scoring documents as if they were queries cancels the passage view's bias; the best-matching part of a long document carries the evidence that one pooled vector dilutes; a score-weighted centroid of the top documents sharpens the query; 1 softcentroid feedback round then pull each query toward its fused top-K.
Parent: g0089
Genome: {"channels": {"dense": "row", "reverse": "row", "para_maxsim": "col", "prf_soft": "col"}, "fusion": "convex", "rounds": 1, "refine": "softcentroid", "share": 0.8}
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
FUSION_SHARE = 0.8


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    with ctx.index_time():
        docs_as_queries = ctx.encode_fn(list(ctx.doc_texts), "retrieval.query")
    reverse = Q @ docs_as_queries.T
    paragraphs = chunk_documents(
        ctx.doc_texts, split_paragraphs, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        paragraphs_vectors = ctx.encode_fn(paragraphs.texts, "retrieval.passage")
    para_maxsim = maxsim(Q, paragraphs_vectors, paragraphs.owner, n_d, mask=mask)
    prf_soft = soft_centroid_query(Q, D, S, mask=mask) @ D.T
    channels = [
        zscore_rows(S, mask),
        zscore_rows(reverse, mask),
        zscore_cols(para_maxsim, mask),
        zscore_cols(prf_soft, mask),
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
