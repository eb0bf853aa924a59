"""
Novelty: measures how peaked each row is (gap between its best and 10th best score, with np.sort).
Hypothesis: combines the best piece (paragraph) with the mean piece (sentence) and mixes the two channels with per-query weights that depend on that gap.
"""
import numpy as np
from embedding_ttc.programs.primitives.lexical import query_term_coverage
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
    C = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    scores = zscore_rows(S, mask)
    best_scores = scores.max(axis=1, keepdims=True)
    gap_scores = best_scores - np.sort(scores, axis=1)
    gap_scores = gap_scores[:, :10]
    weight = gap_scores / gap_scores.sum(axis=1, keepdims=True)
    fused = fuse([S, B, C], [W_S, W_BM25, W_BM25], mask=mask, method="rrf")
    return fused
