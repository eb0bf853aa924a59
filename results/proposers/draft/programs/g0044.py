"""Novelty: fuses the coarse and fine channels of a matryoshka cascading setup.
Hypothesis: by combining the best sentences with the top-mean paragraphs, the…"""
import numpy as np
from embedding_ttc.programs.primitives.channels import fuse
from embedding_ttc.programs.primitives.channels import bm25_scores, prefix_scores
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows, zscore_cols
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import rrf

W_S = 1.0
W_BM25 = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    B = bm25_scores(ctx)
    prefix2 = prefix_scores(Q, D, Q.shape[1] // 2)  # (n_q, n_d) coarse channel
    prefix1 = prefix_scores(Q, D, Q.shape[1] // 4)  # (n_q, n_d) coarser channel
    S2 = zscore_rows(S, mask)
    S1 = zscore_cols(S, mask)
    scores2 = S2.max(axis=1, keepdims=True)
    scores1 = S1.max(axis=1, keepdims=True)
    best_scores2 = scores2.max(axis=1, keepdims=True)
    best_scores1 = scores1.max(axis=1, keepdims=True)
    gap_scores2 = best_scores2 - np.sort(scores2, axis=1)
    gap_scores1 = best_scores1 - np.sort(scores1, axis=1)
    weights = gap_scores2 / gap_scores1.sum(axis=1, keepdims=True)
    fused = fuse([S, prefix2, prefix1], [W_S, W_BM25, 1.0], mask=mask)
    return fused
