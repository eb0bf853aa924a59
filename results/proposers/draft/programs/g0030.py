"""Novelty: uses prf_scores to move each query toward its top-ranked documents, then fuses the channels.
Hypothesis: the best documents share the vocabulary the query lacks."""
import numpy as np
from embedding_ttc.programs.primitives.channels import fuse, prf_scores
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage
W_S = 1.0
W_P = 0.5
W_P2 = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    P = prf_scores(Q, D, S, k=3, alpha=0.5, mask=mask)  # (n_q, n_d) — SoftCentr's query: `q' = normalize((1 - a…
    P2 = prf_scores(Q, D, P, k=3, alpha=0.5, mask=mask)  # (n_q, n_d) — SoftCentr's query: `q' = normalize((1 - a…
    out = fuse([S, P, P2], [W_S, W_P, W_P2], mask=mask)  # float32 (n_q, n_d)
    return out.astype(np.float32)
