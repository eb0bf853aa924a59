"""Novelty: moves each query toward the mean of its top-ranked documents (Rocchio pseudo-relevance feedback) and scores the documents
by their pieces at two granularities (chunk scores).
Hypothesis: first, each query is moved toward its top-ranked documents, then the top-ranked documents are scored by their pieces at two granularities.
This approach combines the benefits of Rocchio and chunking: moves the query towards the best documents, and scores the documents based on the top-ranked pieces."""
import numpy as np
from embedding_ttc.programs.primitives.channels import fuse, prf_scores, chunk_scores
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.feedback import soft_centroid_query

K = 3
ALPHA = 0.7

K2 = 5
ALPHA2 = 0.6

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    P = prf_scores(Q, D, S, k=K, alpha=ALPHA, mask=mask)  # (n_q, n_d); moved query's cosine matrix
    A = chunk_scores(Q, ctx, "paragraph", "max", mask)  # (n_q, n_d); best piece of each paragraph
    B = chunk_scores(Q, ctx, "sentence_pair", "topmean", mask)  # (n_q, n_d); mean piece of each sentence pair
    S2 = fuse([S, A, B], [1.0, 1.0, 1.0], mask=mask)  # (n_q, n_d); fused cosine score of all pieces
    return S2.astype(np.float32)
