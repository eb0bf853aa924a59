"""Novelty: combines the best piece (paragraph) with the mean piece (sentence) and fuses with S.
Hypothesis: the best pieces share the vocabulary the query lacks.
Import exactly as shown; nothing else exists."""
import numpy as np
from embedding_ttc.programs.primitives.channels import fuse, chunk_scores, chunk_scores
from embedding_ttc.programs.primitives.scores import zscore_rows, zscore_cols, candidate_mask
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25
W_S = 1.0
W_PAR = 0.5
W_SENT = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    A = chunk_scores(Q, ctx, "paragraph", "max", mask)  # (n_q, n_d); documents encoded once
    B = chunk_scores(Q, ctx, "sentence_pair", "topmean", mask)  # (n_q, n_d); documents encoded once
    S_par = zscore_rows(A, mask)
    S_sent = zscore_cols(B, mask)
    gap_scores_par = S_par.max(axis=1, keepdims=True) - np.sort(S_par, axis=1)
    gap_scores_sent = S_sent.max(axis=1, keepdims=True) - np.sort(S_sent, axis=1)
    weight_par = gap_scores_par / gap_scores_par.sum(axis=1, keepdims=True)
    weight_sent = gap_scores_sent / gap_scores_sent.sum(axis=1, keepdims=True)
    fused = fuse([S, S_par, S_sent], [W_S, W_PAR, W_SENT], mask=mask)
    return fused
