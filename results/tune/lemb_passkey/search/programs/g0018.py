"""Structural program: dense + bm25 by a convex combination (weight 0.9 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0009, drops MaxSim over paragraphs [genome dense:row+bm25:row|convex:0.9|0].
Hypothesis: Fusing the dense cosine S and BM25 by a convex combination (weight 0.9 shared by the channels after the first) should raise nDCG@10 on every task, because BM25 rewards exact rare terms (names, numbers) that embeddings blur.
Parent: g0009
Genome: {"channels": {"dense": "row", "bm25": "row"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.9}
"""

import numpy as np

from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows

FUSION_SHARE = 0.9


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    channels = [
        zscore_rows(S, mask),
        zscore_rows(bm25, mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
