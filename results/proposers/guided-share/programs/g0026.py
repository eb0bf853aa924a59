"""Structural program: dense + sent_maxsim + bm25 + bigram by a convex combination (weight 0.5 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0018, fuses by a convex combination (weight 0.5 shared by the channels after the first) instead of a sum of row z-scores [genome dense:row+sent_maxsim:both+bm25:row+bigram:both|convex:0.5|0].
Hypothesis: Changing the fusion method from a sum of row z-scores to a convex combination of channels after the first helps nDCG@10 on every task, as it ensures that the best-matching part of a document is emphasized and reduces noise. The convex combination of channels after the first allows the encoder to use
Parent: g0018
Genome: {"channels": {"dense": "row", "sent_maxsim": "both", "bm25": "row", "bigram": "both"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.5}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_sentences,
)
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.lexical import BM25, bigram_overlap
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_cols, zscore_rows

FUSION_SHARE = 0.5


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    sentences = chunk_documents(
        ctx.doc_texts, split_sentences, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        sentences_vectors = ctx.encode_fn(sentences.texts, "retrieval.passage")
    sent_maxsim = maxsim(Q, sentences_vectors, sentences.owner, n_d, mask=mask)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    channels = [
        zscore_rows(S, mask),
        zscore_rows(zscore_cols(sent_maxsim, mask), mask),
        zscore_rows(bm25, mask),
        zscore_rows(zscore_cols(bigram, mask), mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
