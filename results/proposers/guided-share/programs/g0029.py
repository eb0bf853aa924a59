"""Structural program: dense + sent_maxsim + bm25 + bigram + prf_soft by a sum of row z-scores, 0 feedback rounds.

Novelty: Relative to g0018, adds a SoftCentroid-refined query (raw scores) [genome dense:row+sent_maxsim:both+bm25:row+bigram:both+prf_soft:none|zsum|0].
Hypothesis: Adding a SoftCentroid-refined query (raw scores) improves nDCG@10 on every task, because it ensures that the best-matching part of a document is emphasized in the dense top-K, which helps in identifying the few documents that can answer the entire query. This method also helps in reducing the noise,
Parent: g0018
Genome: {"channels": {"dense": "row", "sent_maxsim": "both", "bm25": "row", "bigram": "both", "prf_soft": "none"}, "fusion": "zsum", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_sentences,
)
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.lexical import BM25, bigram_overlap
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_cols, zscore_rows


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
    prf_soft = soft_centroid_query(Q, D, S, mask=mask) @ D.T
    channels = [
        zscore_rows(S, mask),
        zscore_rows(zscore_cols(sent_maxsim, mask), mask),
        zscore_rows(bm25, mask),
        zscore_rows(zscore_cols(bigram, mask), mask),
        prf_soft,
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for channel in channels:
        fused += zscore_rows(channel, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
