"""P0: the cosine baseline. Returns S unchanged (as a new matrix)."""


def program(Q, D, S, ctx):
    # Novelty: adding a new feedback step: soft_centroid_query increases nDCG@10 by moving each query closer to its top documents.
    # Hypothesis: SoftCentroid' query modifies the cosine scores by shifting the queries closer to their top documents, thereby improving the top-k retrieval and nDCG@10.
