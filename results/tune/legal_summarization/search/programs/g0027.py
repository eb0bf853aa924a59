"""Structural program: dense + bm25 by a weighted sum, 1 feedback round.

Novelty: Relative to g0026, drops rare-term IDF [genome dense:minmax+bm25:row|wsum|1|vprf].
Hypothesis: Fusing the dense cosine S and BM25 by a weighted sum should raise nDCG@10 on every task, because BM25 rewards exact rare terms (names, numbers) that embeddings blur; 1 vprf feedback round then pull each query toward its fused top-K.
Parent: g0026
Genome: {"channels": {"dense": "minmax", "bm25": "row"}, "fusion": "wsum", "rounds": 1, "refine": "vprf"}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import vprf_update
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import (
    candidate_mask,
    minmax_rows,
    top_k_indices,
    zscore_rows,
)

FEEDBACK_K = 5
VPRF_BETA = 0.3
CHANNEL_WEIGHTS = (1.0, 0.5)


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    channels = [
        minmax_rows(S, mask),
        zscore_rows(bm25, mask),
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for weight, channel in zip(CHANNEL_WEIGHTS, channels, strict=True):
        fused += np.float32(weight) * channel
    query = Q
    # feedback round 1: refine the query from the fused top-K, rescore D
    query = vprf_update(query, D, top_k_indices(fused, FEEDBACK_K, mask), VPRF_BETA)
    fused = zscore_rows(fused, mask) + zscore_rows(query @ D.T, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
