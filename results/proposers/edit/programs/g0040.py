"""An edit of g0000-P0

Novelty: 
Hypothesis: 
Parent: g0000-P0
Edit: 1 block(s) placed (exact)
"""
from embedding_ttc.programs.primitives.feedback import soft_centroid_query


def program(Q, D, S, ctx):
    S = soft_centroid_query(Q, D, S, k=3, tau=0.05, alpha=0.5, mask=None)
    return S
