"""Novelty: cascades the document embeddings to a smaller dimension before fusion.
Hypothesis: the smaller dimensions capture more of the original information, reducing…
"""
from embedding_ttc.programs.primitives.channels import fuse, prefix_scores
from embedding_ttc.programs.primitives.scores import candidate_mask

W_S = 1.0
W_P1 = 0.5
W_P2 = 0.5


def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    P1 = prefix_scores(Q, D, Q.shape[1] // 4)  # (n_q, d1) P1
    P2 = prefix_scores(Q, D, Q.shape[1] // 2)  # (n_q, d2) P2
    return fuse([S, P2, P1], [W_S, W_P2, W_P1], mask=mask)  # float32 (n_q, n_d)
