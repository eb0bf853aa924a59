"""Structural program: dense + sent_topmean by a sum of row z-scores, 0 feedback rounds.

Novelty: Relative to g0010, replaces BM25 with TopMeanSim over sentences [genome dense:row+sent_topmean:row|zsum|0].
Hypothesis: Replacing BM25 with TopMeanSim over sentences (row z-scores) (row z-scores) improves nDCG@10 on every task, because BM25 rewards exact rare terms (names, numbers) that embeddings blur.
Parent: g0010
Genome: {"channels": {"dense": "row", "sent_topmean": "row"}, "fusion": "zsum", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_sentences,
)
from embedding_ttc.programs.primitives.late import topmeansim
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    sentences = chunk_documents(
        ctx.doc_texts, split_sentences, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        sentences_vectors = ctx.encode_fn(sentences.texts, "retrieval.passage")
    sent_topmean = topmeansim(Q, sentences_vectors, sentences.owner, n_d, mask=mask)
    channels = [
        zscore_rows(S, mask),
        zscore_rows(sent_topmean, mask),
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for channel in channels:
        fused += zscore_rows(channel, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
