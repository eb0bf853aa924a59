"""Novelty: moves each query toward its top-ranked documents: P = prf_scores(Q, D, S, k=K, alpha=ALPHA, mask=mask) is the moved query's cosine matrix. Add a second round fed by the first one's ranking, P2 = prf_scores(Q, D, P, k=K2, alpha=ALPHA2, mask=mask), and fuse the channels with S: fuse([S, P, P2], [weights], mask). Second idea: Read each query's score distribution: zscore_rows(S, mask) and zscore_cols(S, mask) (which removes hub documents close to every query); measure how peaked each row is (gap between its best and 10th best score, with np.sort), and mix the two channels with per-query weights that depend on that gap."""
import numpy as np
from embedding_ttc.programs.primitives.channels import prf_scores
from embedding_ttc.programs.primitives.channels import fuse, bm25_scores
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import zscore_rows, zscore_cols, rrf, top_k_indices

K = 3
ALPHA = 0.7
K2 = 2
ALPHA2 = 0.3

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    B = bm25_scores(ctx)
    scores = zscore_rows(S, mask)
    best_scores = scores.max(axis=1, keepdims=True)
    gap_scores = best_scores - np.sort(scores, axis=1)
    gap_scores = gap_scores[:, :10]
    weight = gap_scores / gap_scores.sum(axis=1, keepdims=True)
    fused = fuse([S, B], [1.00, 1.00], mask=mask)
    P = prf_scores(Q, D, S, k=K, alpha=ALPHA, mask=mask)
    P2 = prf_scores(Q, D, P, k=K2, alpha=ALPHA2, mask=mask)
    fused2 = fuse([fused, P, P2], [1.00, 1.00, 1.00], mask=mask)
    return fused2.astype(np.float32)
