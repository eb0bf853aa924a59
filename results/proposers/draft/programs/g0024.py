import numpy as np
from embedding_ttc.programs.primitives.channels import fuse, prefix_scores
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage
W_S = 1.0
W_P = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    P1 = prefix_scores(Q, D, D.shape[1] // 4)  # coarse channel
    P2 = prefix_scores(Q, D, D.shape[1] // 2)  # coarse channel
    return fuse([S, P2, P1], [W_S, W_P, W_P], mask=mask)  # fuse with weights
