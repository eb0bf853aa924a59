"""Structural program: rare_idf + anti_hub by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0093, replaces the dense cosine S with the reversed perspective (documents encoded as queries); drops the reversed perspective (documents encoded as queries); fuses by reciprocal rank fusion instead of a convex combination (weight 0.8 shared by the channels after the first); drops word-bigram overlap [genome rare_idf:col+anti_hub:none|rrf|0].
Hypothesis: Fusing rare-term IDF and the distance from the candidates' centroid (a hubness correction) by reciprocal rank fusion should raise nDCG@10 on every task, because the rarest query terms identify the few documents that can answer; hub documents sit near every candidate set's centre and crowd every ranking.
Parent: g0093
Genome: {"channels": {"rare_idf": "col", "anti_hub": "none"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.lexical import rare_term_idf
from embedding_ttc.programs.primitives.scores import RRF_K, candidate_mask, rrf, zscore_cols

NORM_FLOOR = 1e-12


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
    members = np.ones((1, n_d), dtype=np.float32)
    if mask is not None:
        members = mask.astype(np.float32)
    pool_centroids = members @ D
    pool_centroids /= np.maximum(
        np.linalg.norm(pool_centroids, axis=1, keepdims=True), NORM_FLOOR
    )
    anti_hub = np.broadcast_to(-(pool_centroids @ D.T), (n_q, n_d)).copy()
    channels = [
        zscore_cols(rare_idf, mask),
        anti_hub,
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
