# Novelty: moves each query toward the mean of its top-K documents, then rescores.
# Hypothesis: the best documents share the vocabulary the query lacks.

import numpy as np
from embedding_ttc.programs.primitives.scores import candidate_mask, top_k_indices

K = 3
ALPHA = 0.7

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    top = top_k_indices(S, K, mask)  # list: per query, an int array of <= K columns
    Q_new = Q.copy()
    for i in range(Q.shape[0]):
        if len(top[i]) > 0:
            q = ALPHA * Q[i] + (1.0 - ALPHA) * D[top[i]].mean(axis=0)
            Q_new[i] = q / np.linalg.norm(q)
    out = 0.5 * S + 0.5 * (Q_new @ D.T)  # (n_q, n_d)
    return out.astype(np.float32)
