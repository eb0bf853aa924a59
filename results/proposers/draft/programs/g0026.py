"""Novelty: measures how peaked each row is (gap between its best and 10th best score, with np.sort).
Hypothesis: a score-distribution analysis with lexical channels with reciprocal rank fusion with rocchio p…
"""
from embedding_ttc.programs.primitives.channels import fuse, query_view_scores, view_scores
from embedding_ttc.programs.primitives.scores import candidate_mask, top_k_indices
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage
W_S = 1.0
W_QV = 0.5
W_VS = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)  # None or (n_q, n_d) bool
    QV = query_view_scores(D, ctx, "retrieval.query")  # (n_q, n_d); documents encoded once
    VS = view_scores(Q, ctx, "text-matching")  # (n_q, n_d); documents encoded once
    return fuse([S, QV, VS], [W_S, W_QV, W_VS], mask=mask, method='rrf')
