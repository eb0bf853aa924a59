"""Structural program: dense + rare_idf + consensus by reciprocal rank fusion, 2 feedback rounds.

Novelty: Relative to g0006, replaces BM25 with rare-term IDF; adds feedback round 2 (softcentroid refinement of the fused top-K); switches each document's consensus with the dense top-K to raw scores (was z-scores over the dense top-K); refines the query by vprf instead of softcentroid [genome dense:row+rare_idf:row+consensus:none|rrf|2|vprf].
Hypothesis: Fusing the dense cosine S, rare-term IDF and each document's consensus with the dense top-K by reciprocal rank fusion should raise nDCG@10 on every task, because the rarest query terms identify the few documents that can answer; relevant documents resemble each other, so agreement with the dense head is evidence an isolated high cosine lacks; 2 vprf feedback rounds then pull each query toward its fused top-K.
Parent: g0006
Genome: {"channels": {"dense": "row", "rare_idf": "row", "consensus": "none"}, "fusion": "rrf", "rounds": 2, "refine": "vprf"}
"""

import numpy as np

from embedding_ttc.programs.primitives.feedback import centroid, vprf_update
from embedding_ttc.programs.primitives.lexical import rare_term_idf
from embedding_ttc.programs.primitives.scores import (
    RRF_K,
    candidate_mask,
    rrf,
    top_k_indices,
    zscore_rows,
)

CONSENSUS_K = 10
FEEDBACK_K = 5
VPRF_BETA = 0.3


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    rare_idf = rare_term_idf(ctx.query_texts, ctx.doc_texts)
    heads = top_k_indices(S, CONSENSUS_K, mask)
    head_centroids = np.array([centroid(D, rows) for rows in heads], dtype=np.float32)
    consensus = head_centroids.reshape(n_q, D.shape[1]) @ D.T
    channels = [
        zscore_rows(S, mask),
        zscore_rows(rare_idf, mask),
        consensus,
    ]
    fused = rrf(channels, mask=mask, k=RRF_K)
    query = Q
    # feedback round 1: refine the query from the fused top-K, rescore D
    query = vprf_update(query, D, top_k_indices(fused, FEEDBACK_K, mask), VPRF_BETA)
    fused = rrf([fused, query @ D.T], mask=mask, k=RRF_K)
    # feedback round 2: refine the query from the fused top-K, rescore D
    query = vprf_update(query, D, top_k_indices(fused, FEEDBACK_K, mask), VPRF_BETA)
    fused = rrf([fused, query @ D.T], mask=mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
