"""Structural program: dense + bigram by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0078, drops MaxSim over paragraphs; drops BM25; fuses by reciprocal rank fusion instead of a convex combination (weight 0.9 shared by the channels after the first) [genome dense:row+bigram:none|rrf|0].
Hypothesis: Fusing the dense cosine S and word-bigram overlap by reciprocal rank fusion should raise nDCG@10 on every task, because phrases matched in order are stronger evidence than single words.
Parent: g0078
Genome: {"channels": {"dense": "row", "bigram": "none"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.lexical import bigram_overlap
from embedding_ttc.programs.primitives.scores import RRF_K, candidate_mask, rrf, zscore_rows


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    bigram = bigram_overlap(ctx.query_texts, ctx.doc_texts)
    channels = [
        zscore_rows(S, mask),
        bigram,
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
