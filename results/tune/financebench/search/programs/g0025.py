"""Structural program: half_dim + bm25 by a weighted sum, 2 feedback rounds.

Novelty: Relative to g0005, switches the dense cosine S to z-scores over the dense top-K (was row z-scores); switches the dense cosine S to column-then-row z-scores (was z-scores over the dense top-K); replaces the dense cosine S with the Matryoshka half-dimension cosine [genome half_dim:both+bm25:row|wsum|2|softcentroid].
Hypothesis: Fusing the Matryoshka half-dimension cosine and BM25 by a weighted sum should raise nDCG@10 on every task, because the coarse prefix of the embedding ranks by topic and resists fine-grained noise; BM25 rewards exact rare terms (names, numbers) that embeddings blur; 2 softcentroid feedback rounds then pull each query toward its fused top-K.
Parent: g0005
Genome: {"channels": {"half_dim": "both", "bm25": "row"}, "fusion": "wsum", "rounds": 2, "refine": "softcentroid"}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_cols, zscore_rows

NORM_FLOOR = 1e-12
FEEDBACK_K = 5
SOFT_TAU = 1.0
SOFT_ALPHA = 0.5
CHANNEL_WEIGHTS = (1.0, 0.5)


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    half = max(1, Q.shape[1] // 2)
    q_half = Q[:, :half] / np.maximum(
        np.linalg.norm(Q[:, :half], axis=1, keepdims=True), NORM_FLOOR
    )
    d_half = D[:, :half] / np.maximum(
        np.linalg.norm(D[:, :half], axis=1, keepdims=True), NORM_FLOOR
    )
    half_dim = q_half @ d_half.T
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    channels = [
        zscore_rows(zscore_cols(half_dim, mask), mask),
        zscore_rows(bm25, mask),
    ]
    fused = np.zeros((n_q, n_d), dtype=np.float32)
    for weight, channel in zip(CHANNEL_WEIGHTS, channels, strict=True):
        fused += np.float32(weight) * channel
    query = Q
    # feedback round 1: refine the query from the fused top-K, rescore D
    query = soft_centroid_query(
        query, D, zscore_rows(fused, mask), k=FEEDBACK_K, tau=SOFT_TAU, alpha=SOFT_ALPHA, mask=mask
    )
    fused = zscore_rows(fused, mask) + zscore_rows(query @ D.T, mask)
    # feedback round 2: refine the query from the fused top-K, rescore D
    query = soft_centroid_query(
        query, D, zscore_rows(fused, mask), k=FEEDBACK_K, tau=SOFT_TAU, alpha=SOFT_ALPHA, mask=mask
    )
    fused = zscore_rows(fused, mask) + zscore_rows(query @ D.T, mask)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
