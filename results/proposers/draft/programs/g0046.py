"""Novelty: moves each query toward its top-ranked documents and mixes the distribution of scores from both channels.

Hypothesis: the best documents share the vocabulary the query lacks.

Imports:"""
import numpy as np
from embedding_ttc.programs.primitives.channels import bm25_scores, prf_scores
from embedding_ttc.programs.primitives.channels import fuse, view_scores
from embedding_ttc.programs.primitives.scores import candidate_mask, top_k_indices, zscore_rows, zscore_cols
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25

W_S = 1.0
W_BM25 = 0.5
W_P = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    B = bm25_scores(ctx)
    scores = zscore_rows(S, mask)
    best_scores = scores.max(axis=1, keepdims=True)
    gap_scores = best_scores - np.sort(scores, axis=1)
    gap_scores = gap_scores[:, :10]
    weight = gap_scores / gap_scores.sum(axis=1, keepdims=True)
    P = prf_scores(Q, D, S, k=3, alpha=0.7, mask=mask)
    P2 = prf_scores(Q, D, P, k=3, alpha=0.7, mask=mask)
    fused = fuse([S, P, P2], [W_S, W_BM25, W_P], mask=mask)
    return fused
