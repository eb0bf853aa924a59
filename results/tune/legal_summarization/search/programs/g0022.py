"""Structural program: dense + bm25 + rare_idf by a convex combination (weight 0.8 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0021, switches rare-term IDF to column-then-row z-scores (was per-query min-max); drops feedback round 1 [genome dense:minmax+bm25:row+rare_idf:both|convex:0.8|0].
Hypothesis: Fusing the dense cosine S, BM25 and rare-term IDF by a convex combination (weight 0.8 shared by the channels after the first) should raise nDCG@10 on every task, because BM25 rewards exact rare terms (names, numbers) that embeddings blur; the rarest query terms identify the few documents that can answer.
Parent: g0021
Genome: {"channels": {"dense": "minmax", "bm25": "row", "rare_idf": "both"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.8}
"""

import numpy as np

from embedding_ttc.programs.primitives.lexical import BM25, rare_term_idf
from embedding_ttc.programs.primitives.scores import (
    candidate_mask,
    minmax_rows,
    zscore_cols,
    zscore_rows,
)

FUSION_SHARE = 0.8


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
    channels = [
        minmax_rows(S, mask),
        zscore_rows(bm25, mask),
        zscore_rows(zscore_cols(rare_idf, mask), mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
