"""Adding a new feedback step: soft_centroid_query

Novelty: Adding a new feedback step: soft_centroid_query
Hypothesis: The addition of a new feedback step can significantly improve the nDCG@10 for tasks like `legal_summarization` and `financebench`, as it helps to refine the ranking of documents based on the quality of the query.
Parent: g0000-P0
Edit: the reply's whole program (no block applied)
"""
from embedding_ttc.programs.primitives.feedback import soft_centroid_query

def program(Q, D, S, ctx):
    # Add a new feedback step: soft_centroid_query
    S = soft_centroid_query(Q, D, S, k=3, tau=0.05, alpha=0.5)
    return S.copy()
