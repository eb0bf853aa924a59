"""BM25 fused with the cosine by RRF (bm25s probes optional modules while it runs)."""

import numpy as np

from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import rrf


def program(Q, D, S, ctx):
    lexical = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    mean_of_nothing = np.mean(np.zeros(0))  # a RuntimeWarning raised from numpy's own code
    return rrf([S, lexical]) + np.float32(0.0 * np.nan_to_num(mean_of_nothing))
