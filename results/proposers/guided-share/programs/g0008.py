"""Structural program: dense + sent_topmean + bm25 by a convex combination (weight 0.6 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0005, adds TopMeanSim over sentences (column z-scores) [genome dense:row+sent_topmean:col+bm25:row|convex:0.6|0].
Hypothesis: Adding TopMeanSim over sentences (column z-scores) improves nDCG@10 on every task because BM25 rewards exact rare terms (names, numbers) that embeddings blur.
Parent: g0005
Genome: {"channels": {"dense": "row", "sent_topmean": "col", "bm25": "row"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.6}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_sentences,
)
from embedding_ttc.programs.primitives.late import topmeansim
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_cols, zscore_rows

FUSION_SHARE = 0.6


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    sentences = chunk_documents(
        ctx.doc_texts, split_sentences, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        sentences_vectors = ctx.encode_fn(sentences.texts, "retrieval.passage")
    sent_topmean = topmeansim(Q, sentences_vectors, sentences.owner, n_d, mask=mask)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    channels = [
        zscore_rows(S, mask),
        zscore_cols(sent_topmean, mask),
        zscore_rows(bm25, mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
