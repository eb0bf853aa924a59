"""Novelty: measures how peaked each row is (gap between its best and 10th best score, with np.sort), and mixes the two channels with per-query weights that depend on that gap.
Hypothesis: improves the score-distribution analysis by focusing more on the top few scores and less on hub documents, thus capturing the most relevant documents."""
import numpy as np
from embedding_ttc.programs.primitives.scores import zscore_cols, zscore_rows
from embedding_ttc.programs.primitives.channels import fuse, bm25_scores, rrf, prefix_scores
from embedding_ttc.programs.primitives.lexical import query_term_coverage
from embedding_ttc.programs.primitives.scores import candidate_mask, top_k_indices
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage
from embedding_ttc.programs.primitives.scores import rrf, top_k_indices

W_S = 1.0
W_BM25 = 0.5
W_QTC = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    B = bm25_scores(ctx)
    C = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    S_zscore = zscore_rows(S, mask)
    C_zscore = zscore_cols(C, mask)
    S_gap = np.sort(S_zscore, axis=1)[:, 9] - np.sort(S_zscore, axis=1)[:, 0]
    W = np.maximum(1.0 - S_gap / 5.0, 0.0)
    return fuse([S, B, C], [W_S, W_BM25, W_QTC], mask=mask, method='rrf')
