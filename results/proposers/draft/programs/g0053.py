import numpy as np
from embedding_ttc.programs.primitives.channels import prf_scores
from embedding_ttc.programs.primitives.channels import fuse, view_scores
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25

W_S = 1.0
W_P = 0.5


def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)  # None or (n_q, n_d) bool
    # Move each query toward its top-ranked documents: P = prf_scores(Q, D, S, k=K, alpha=ALPHA, mask=mask)
    P = prf_scores(Q, D, S, k=3, alpha=0.5, mask=mask)
    # Add a second round fed by the first one's ranking, P2 = prf_scores(Q, D, P, k=K2, alpha=ALPHA2, mask=mask), and fuse the channels with S: fuse([S, P, P2], [weights], mask)
    P2 = prf_scores(Q, D, P, k=3, alpha=0.5, mask=mask)
    fused = fuse([S, P, P2], [W_S, W_P, W_P], mask=mask)
    return fused.astype(np.float32)
