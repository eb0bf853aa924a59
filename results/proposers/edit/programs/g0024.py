"""Adding a new feedback step: soft_centroid_query increases nDCG@10 by moving each query closer to its top documents.

Novelty: Adding a new feedback step: soft_centroid_query increases nDCG@10 by moving each query closer to its top documents.
Hypothesis: The `soft_centroid_query` step helps in adjusting the scores of documents based on the query, potentially raising nDCG@10 by biasing the relevance to the top documents.
Parent: g0000-P0
Edit: 1 block(s) placed (exact)
"""
from embedding_ttc.programs.primitives.feedback import soft_centroid_query


def program(Q, D, S, ctx):
    return soft_centroid_query(Q, D, S, k=3, tau=0.05, alpha=0.5, mask=None)
