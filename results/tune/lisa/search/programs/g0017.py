"""Structural program: dense + reverse + bm25 by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0001, adds the reversed perspective (documents encoded as queries) (column z-scores) [genome dense:row+reverse:col+bm25:row|rrf|0].
Hypothesis: Fusing the dense cosine S, the reversed perspective (documents encoded as queries) and BM25 by reciprocal rank fusion should raise nDCG@10 on every task, because scoring documents as if they were queries cancels the passage view's bias; BM25 rewards exact rare terms (names, numbers) that embeddings blur.
Parent: g0001
Genome: {"channels": {"dense": "row", "reverse": "col", "bm25": "row"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import (
    RRF_K,
    candidate_mask,
    rrf,
    zscore_cols,
    zscore_rows,
)


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    with ctx.index_time():
        docs_as_queries = ctx.encode_fn(list(ctx.doc_texts), "retrieval.query")
    reverse = Q @ docs_as_queries.T
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    channels = [
        zscore_rows(S, mask),
        zscore_cols(reverse, mask),
        zscore_rows(bm25, mask),
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
