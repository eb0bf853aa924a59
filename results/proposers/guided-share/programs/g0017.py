"""Structural program: dense + bm25 + bigram by a sum of row z-scores, 0 feedback rounds.

Novelty: Relative to g0010, adds word-bigram overlap (raw scores) [genome dense:row+bm25:row+bigram:none|zsum|0].
Hypothesis: The addition of word-bigram overlap (raw scores) is beneficial for nDCG@10 on aila_statutes task, as it improves the representation of phrases that are matched in order, which helps in capturing the overall intent of the query better than its few words.
Parent: g0010
Genome: {"channels": {"dense": "row", "bm25": "row", "bigram": "none"}, "fusion": "zsum", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.lexical import BM25, bigram_overlap
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    channels = [
        zscore_rows(S, mask),
        zscore_rows(bm25, mask),
        bigram,
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for channel in channels:
        fused += zscore_rows(channel, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
