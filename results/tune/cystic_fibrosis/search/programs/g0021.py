"""Structural program: dense + para_topmean by a sum of row z-scores, 2 feedback rounds.

Novelty: Relative to g0009, replaces BM25 with TopMeanSim over paragraphs [genome dense:row+para_topmean:row|zsum|2|softcentroid].
Hypothesis: Fusing the dense cosine S and TopMeanSim over paragraphs by a sum of row z-scores should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; 2 softcentroid feedback rounds then pull each query toward its fused top-K.
Parent: g0009
Genome: {"channels": {"dense": "row", "para_topmean": "row"}, "fusion": "zsum", "rounds": 2, "refine": "softcentroid"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_paragraphs,
)
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.late import topmeansim
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows

FEEDBACK_K = 5
SOFT_TAU = 1.0
SOFT_ALPHA = 0.5


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    paragraphs = chunk_documents(
        ctx.doc_texts, split_paragraphs, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        paragraphs_vectors = ctx.encode_fn(paragraphs.texts, "retrieval.passage")
    para_topmean = topmeansim(Q, paragraphs_vectors, paragraphs.owner, n_d, mask=mask)
    channels = [
        zscore_rows(S, mask),
        zscore_rows(para_topmean, mask),
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for channel in channels:
        fused += zscore_rows(channel, mask)
    query = Q
    # feedback round 1: refine the query from the fused top-K, rescore D
    query = soft_centroid_query(
        query, D, zscore_rows(fused, mask), k=FEEDBACK_K, tau=SOFT_TAU, alpha=SOFT_ALPHA, mask=mask
    )
    fused = zscore_rows(fused, mask) + zscore_rows(query @ D.T, mask)
    # feedback round 2: refine the query from the fused top-K, rescore D
    query = soft_centroid_query(
        query, D, zscore_rows(fused, mask), k=FEEDBACK_K, tau=SOFT_TAU, alpha=SOFT_ALPHA, mask=mask
    )
    fused = zscore_rows(fused, mask) + zscore_rows(query @ D.T, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
