"""Structural program: dense + para_topmean + bm25 by a convex combination (weight 0.8 shared by the channels after the first), 1 feedback round.

Novelty: Relative to g0019, moves the share of the channels after the first from 0.8 to 0.9; moves the share of the channels after the first from 0.9 to 0.8; adds TopMeanSim over paragraphs (row z-scores) [genome dense:minmax+para_topmean:row+bm25:row|convex:0.8|1|vprf].
Hypothesis: Fusing the dense cosine S, TopMeanSim over paragraphs and BM25 by a convex combination (weight 0.8 shared by the channels after the first) should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; BM25 rewards exact rare terms (names, numbers) that embeddings blur; 1 vprf feedback round then pull each query toward its fused top-K.
Parent: g0019
Genome: {"channels": {"dense": "minmax", "para_topmean": "row", "bm25": "row"}, "fusion": "convex", "rounds": 1, "refine": "vprf", "share": 0.8}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_paragraphs,
)
from embedding_ttc.programs.primitives.feedback import vprf_update
from embedding_ttc.programs.primitives.late import topmeansim
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import (
    candidate_mask,
    minmax_rows,
    top_k_indices,
    zscore_rows,
)

FEEDBACK_K = 5
VPRF_BETA = 0.3
FUSION_SHARE = 0.8


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    paragraphs = chunk_documents(
        ctx.doc_texts, split_paragraphs, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        paragraphs_vectors = ctx.encode_fn(paragraphs.texts, "retrieval.passage")
    para_topmean = topmeansim(Q, paragraphs_vectors, paragraphs.owner, n_d, mask=mask)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    channels = [
        minmax_rows(S, mask),
        zscore_rows(para_topmean, mask),
        zscore_rows(bm25, mask),
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
