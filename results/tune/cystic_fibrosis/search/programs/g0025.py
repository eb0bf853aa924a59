"""Structural program: dense + bm25 + bigram by a sum of row z-scores, 0 feedback rounds.

Novelty: Relative to g0024, drops feedback round 1 [genome dense:row+bm25:row+bigram:minmax|zsum|0].
Hypothesis: Fusing the dense cosine S, BM25 and word-bigram overlap by a sum of row z-scores should raise nDCG@10 on every task, because BM25 rewards exact rare terms (names, numbers) that embeddings blur; phrases matched in order are stronger evidence than single words.
Parent: g0024
Genome: {"channels": {"dense": "row", "bm25": "row", "bigram": "minmax"}, "fusion": "zsum", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.lexical import BM25, bigram_overlap
from embedding_ttc.programs.primitives.scores import candidate_mask, minmax_rows, zscore_rows


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    channels = [
        zscore_rows(S, mask),
        zscore_rows(bm25, mask),
        minmax_rows(bigram, mask),
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for channel in channels:
        fused += zscore_rows(channel, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
