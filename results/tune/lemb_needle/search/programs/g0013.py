"""Structural program: dense + para_topmean + bm25 by a convex combination (weight 0.9 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0009, changes MaxSim over paragraphs to TopMeanSim over paragraphs; switches TopMeanSim over paragraphs to column-then-row z-scores (was z-scores over the dense top-K) [genome dense:row+para_topmean:both+bm25:row|convex:0.9|0].
Hypothesis: Fusing the dense cosine S, TopMeanSim over paragraphs and BM25 by a convex combination (weight 0.9 shared by the channels after the first) should raise nDCG@10 on every task, because the best-matching part of a long document carries the evidence that one pooled vector dilutes; BM25 rewards exact rare terms (names, numbers) that embeddings blur.
Parent: g0009
Genome: {"channels": {"dense": "row", "para_topmean": "both", "bm25": "row"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.9}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_paragraphs,
)
from embedding_ttc.programs.primitives.late import topmeansim
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_cols, zscore_rows

FUSION_SHARE = 0.9


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
        zscore_rows(S, mask),
        zscore_rows(zscore_cols(para_topmean, mask), mask),
        zscore_rows(bm25, mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
