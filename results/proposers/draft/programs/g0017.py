# Novelty: adds a second round of Rocchio pseudo-relevance feedback using the first one's ranking.
# Hypothesis: moves each query toward the mean of its top-ranked documents, then rescores.
import numpy as np
from embedding_ttc.programs.primitives.channels import fuse, prf_scores, prefix_scores
from embedding_ttc.programs.primitives.scores import candidate_mask, top_k_indices

ALPHA = 0.7

K = 3
ALPHA2 = 0.7  # Define the constant at module level

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    P = prf_scores(Q, D, S, k=K, alpha=ALPHA, mask=mask)  # (n_q, n_d) — each query moved toward its top K documents
    P2 = prf_scores(Q, D, P, k=K, alpha=ALPHA2, mask=mask)  # (n_q, n_d) — each query moved toward its top K documents
    return fuse([S, P, P2], [1.0, 1.0, 1.0], mask=mask, method='rrf')
