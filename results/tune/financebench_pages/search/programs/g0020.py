"""Structural program: dense + reverse + bm25 by a weighted sum, 0 feedback rounds.

Novelty: Relative to g0016, replaces each document's consensus with the dense top-K with the reversed perspective (documents encoded as queries) [genome dense:row+reverse:row+bm25:row|wsum|0].
Hypothesis: Fusing the dense cosine S, the reversed perspective (documents encoded as queries) and BM25 by a weighted sum should raise nDCG@10 on every task, because scoring documents as if they were queries cancels the passage view's bias; BM25 rewards exact rare terms (names, numbers) that embeddings blur.
Parent: g0016
Genome: {"channels": {"dense": "row", "reverse": "row", "bm25": "row"}, "fusion": "wsum", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows

CHANNEL_WEIGHTS = (1.0, 0.5, 0.5)


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    with ctx.index_time():
        docs_as_queries = ctx.encode_fn(list(ctx.doc_texts), "retrieval.query")
    reverse = Q @ docs_as_queries.T
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    channels = [
        zscore_rows(S, mask),
        zscore_rows(reverse, mask),
        zscore_rows(bm25, mask),
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for weight, channel in zip(CHANNEL_WEIGHTS, channels, strict=True):
        fused += np.float32(weight) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
