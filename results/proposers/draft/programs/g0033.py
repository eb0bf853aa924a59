"""Novelty: measures how peaked each row is (gap between its best and 10th best score, with np.sort).
Hypothesis: mixes the two channels with per-query weights that depend on that gap."""
import numpy as np
from embedding_ttc.programs.primitives.scores import zscore_rows
from embedding_ttc.programs.primitives.channels import fuse, bm25_scores
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25
W_S = 1.0
W_BM25 = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    B = bm25_scores(ctx)
    scores = zscore_rows(S, mask)  # (n_q, n_d)
    best_scores = scores.max(axis=1, keepdims=True)
    gap_scores = best_scores - np.sort(scores, axis=1)
    gap_scores = gap_scores[:, :10]  # keep the top 10 scores for each row
    weight = gap_scores / gap_scores.sum(axis=1, keepdims=True)  # normalize the gap scores
    fused = fuse([S, B], [W_S, W_BM25], mask=mask)
    return fused
