"""Test program: the cosine plus BM25 over the documents it is handed.

Novelty: written for the deploy tests; a lexical channel whose statistics (IDF, mean
length) are taken over the candidates.
Hypothesis: none; it exists to be deployed.
"""

import numpy as np

from embedding_ttc.programs.primitives.lexical import BM25

BM25_WEIGHT = np.float32(0.05)


def program(Q, D, S, ctx):
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    return (S + BM25_WEIGHT * bm25).astype(np.float32)
