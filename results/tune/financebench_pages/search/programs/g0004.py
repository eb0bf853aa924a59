"""Structural program: xview + bm25 by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to the base genome, replaces the dense cosine S with the cross-adapter text-matching view [genome xview:row+bm25:row|rrf|0].
Hypothesis: Fusing the cross-adapter text-matching view and BM25 by reciprocal rank fusion should raise nDCG@10 on every task, because a second adapter votes where the retrieval views disagree; BM25 rewards exact rare terms (names, numbers) that embeddings blur.
Parent: g0000-P0
Genome: {"channels": {"xview": "row", "bm25": "row"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import RRF_K, candidate_mask, rrf, zscore_rows


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    with ctx.index_time():
        docs_matching = ctx.encode_fn(list(ctx.doc_texts), "text-matching")
    queries_matching = ctx.encode_fn(list(ctx.query_texts), "text-matching")
    xview = queries_matching @ docs_matching.T
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    channels = [
        zscore_rows(xview, mask),
        zscore_rows(bm25, mask),
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
