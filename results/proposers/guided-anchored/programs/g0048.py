"""Structural program: dense + bm25 + prf_soft by a convex combination (weight 0.5 shared by the channels after the first), 0 feedback rounds.

Novelty: Relative to g0005, adds a SoftCentroid-refined query (column-then-row z-scores); (every single edit of g0007 is tried; the next open parent) [genome dense:row+bm25:row+prf_soft:both|convex:0.5|0].
Hypothesis: Adding a SoftCentroid-refined query (column-then-row z-scores) improves nDCG@10 by reducing noise and aligning the cosine vectors with the topic distribution, which can improve the relevancy of the documents.
Parent: g0005
Genome: {"channels": {"dense": "row", "bm25": "row", "prf_soft": "both"}, "fusion": "convex", "rounds": 0, "refine": "rocchio", "share": 0.5}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_cols, zscore_rows

FUSION_SHARE = 0.5


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    prf_soft = soft_centroid_query(Q, D, S, mask=mask) @ D.T
    channels = [
        zscore_rows(S, mask),
        zscore_rows(bm25, mask),
        zscore_rows(zscore_cols(prf_soft, mask), mask),
    ]
    fused = np.float32(1.0 - FUSION_SHARE) * channels[0]
    for channel in channels[1:]:
        fused = fused + np.float32(FUSION_SHARE / (len(channels) - 1)) * channel
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
