"""An edit of g0000-P0

Novelty: 
Hypothesis: 
Parent: g0000-P0
Edit: 1 block(s) placed (exact)
"""
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.scores import zscore_rows

def program(Q, D, S, ctx):
    # Normalise the cosine scores
    S_normalized = zscore_rows(S)

    # Add a new feedback step: soft_centroid_query
    S_updated = soft_centroid_query(Q, D, S_normalized, k=3, tau=0.05, alpha=0.5)

    return S_updated
