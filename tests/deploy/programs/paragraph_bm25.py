"""Test program: the cosine, paragraph and sentence MaxSim and BM25 over the candidates.

Novelty: written for the deploy tests; the primitives a searched program (g0048) calls over
its documents (BM25 fitted on them, their paragraphs and sentences encoded at index time),
which a served index answers from its stored analyses and chunk rows.
Hypothesis: none; it exists to be deployed.
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_paragraphs,
    split_sentences,
)
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows

BM25_WEIGHT = np.float32(0.5)


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    paragraphs = chunk_documents(
        ctx.doc_texts, split_paragraphs, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        paragraph_vectors = ctx.encode_fn(paragraphs.texts, "retrieval.passage")
    para_maxsim = maxsim(Q, paragraph_vectors, paragraphs.owner, n_d, mask=mask)
    sentences = chunk_documents(ctx.doc_texts, split_sentences, max_chunks_per_doc=4)
    with ctx.index_time():
        sentence_vectors = ctx.encode_fn(sentences.texts, "retrieval.passage")
    sent_maxsim = maxsim(Q, sentence_vectors, sentences.owner, n_d, mask=mask)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    fused = zscore_rows(S, mask) + para_maxsim + sent_maxsim + BM25_WEIGHT * zscore_rows(bm25, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
