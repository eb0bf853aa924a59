"""An edit of g0000-P0

Novelty: 
Hypothesis: 
Parent: g0000-P0
Edit: 1 block(s) placed (exact)
"""
from embedding_ttc.programs.primitives.channels import fuse, prf_scores
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.scores import zscore_rows


def program(Q, D, S, ctx):
    S = zscore_rows(S)  # normalise the cosine scores
    S = prf_scores(Q, D, S, k=3, alpha=0.5)  # feedback: each query moved toward its top 3 documents
    S = fuse([S, prf_scores(Q, D, S, k=3, alpha=0.5)])  # fusion: weighted sum of row z-scores
    S = soft_centroid_query(Q, D, S, k=3, tau=0.05, alpha=0.5)  # soft_centroid query: normalize((1 - alpha) * q + alpha * q')
    return S
