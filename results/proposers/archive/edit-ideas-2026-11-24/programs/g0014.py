"""Matryoshka cascading (dimension truncation)

Novelty: Matryoshka cascading (dimension truncation)
Hypothesis: The idea of using Matryoshka cascading for dimension truncation to improve retrieval performance, specifically focusing on the cosine scores, can be effective by reducing the dimensionality of the document embeddings and enhancing the query embedding. This approach can help in capturing the essential information more efficiently, potentially leading to better nDCG@10 scores for various retrieval tasks.
Parent: g0000-P0
Edit: 1 block(s) placed (exact)
"""


def program(Q, D, S, ctx):
    return S.copy()  # an example: this block changes only the comment
