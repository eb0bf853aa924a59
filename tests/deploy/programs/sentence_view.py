"""Test program: the cosine, sentence MaxSim and the documents under the query view, summed.

Novelty: written for the deploy tests; two kinds of index-time encode (every document's
sentences under retrieval.passage, the whole documents under retrieval.query).
Hypothesis: none; it exists to be deployed.
Parent: g0001
"""

import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    split_sentences,
)
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.scores import candidate_mask


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    sentences = chunk_documents(
        ctx.doc_texts, split_sentences, max_chunks_per_doc=MAX_CHUNKS_PER_DOC
    )
    with ctx.index_time():
        sentence_vectors = ctx.encode_fn(sentences.texts, "retrieval.passage")
        reversed_documents = ctx.encode_fn(list(ctx.doc_texts), "retrieval.query")
    sentence_maxsim = maxsim(Q, sentence_vectors, sentences.owner, n_d, mask=mask)
    scores = S + sentence_maxsim + Q @ reversed_documents.T
    if mask is not None:
        scores = np.where(mask, scores, 0.0)
    return scores.astype(np.float32)
