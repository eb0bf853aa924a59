"""Novelty: combines Rocchio pseudo-relevance feedback with matryoshka cascading.
Hypothesis: the coarse and fine channels of a matryoshka cascading are weighted by their distance from the mean of the top documents, and the fine channel is the best score."""
import numpy as np
from embedding_ttc.programs.primitives.scores import zscore_rows
from embedding_ttc.programs.primitives.channels import fuse, bm25_scores, chunk_scores, prefix_scores, prf_scores, query_view_scores, view_scores
from embedding_ttc.programs.primitives.scores import candidate_mask, top_k_indices

K = 3
ALPHA = 0.7
K2 = 2
ALPHA2 = 0.7

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    B = bm25_scores(ctx)
    P = prf_scores(Q, D, S, k=K, alpha=ALPHA, mask=mask)
    P2 = prf_scores(Q, D, P, k=K2, alpha=ALPHA2, mask=mask)
    Q_C = Q.shape[1] // 4
    Q_F = Q.shape[1] // 2
    P1 = prefix_scores(Q, D, Q_C)
    P2 = prefix_scores(Q, D, Q_F)
    fine = S
    coarse1 = P1
    coarse2 = P2
    coarse1 = zscore_rows(coarse1)
    coarse2 = zscore_rows(coarse2)
    fine = zscore_rows(fine)
    distance = np.linalg.norm(coarse1 - fine)
    distance = np.linalg.norm(coarse2 - fine)
    weight1 = distance / distance.sum()
    weight2 = distance / distance.sum()
    fused = fuse([S, fine, P, P2, coarse1, coarse2], [1.0, 1.0, 1.0, 1.0, weight1, weight2], mask=mask)
    return fused
