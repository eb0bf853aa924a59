import numpy as np
import re
from embedding_ttc.programs.primitives.channels import fuse, chunk_scores
from embedding_ttc.programs.primitives.scores import candidate_mask

W_S = 1.0
W_CHUNK = 0.5


def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)  # None or (n_q, n_d) bool
    M = chunk_scores(Q, ctx, "sentence", "max", mask)  # (n_q, n_d); documents encoded once
    M2 = chunk_scores(Q, ctx, "paragraph", "topmean", mask)  # (n_q, n_d); documents encoded once
    return fuse([S, M, M2], [W_S, W_CHUNK, W_CHUNK], mask=mask)  # float32 (n_q, n_d)
