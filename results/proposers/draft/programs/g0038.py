from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.channels import prefix_scores
# Novelty: combines the coarse prefix channels with the fine S channel, fusing them in a matryoshka cascading (dimension truncation) fashion.
# Hypothesis: the coarse channels capture the vocabulary the query lacks, and the fine channel captures the more detailed semantic information.

import numpy as np
from embedding_ttc.programs.primitives.channels import fuse, view_scores
from embedding_ttc.programs.primitives.scores import zscore_rows
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25

W_S = 1.0
W_PREFIX = 0.5

def program(Q, D, S, ctx):
    S = S.reshape(-1, D.shape[1])  # (n_q * D.shape[1], d); flatten to the original shape
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    # Coarse prefix channels
    prefix1 = prefix_scores(Q, D, Q.shape[1] // 4)  # (n_q, n_d); documents encoded once
    prefix2 = prefix_scores(Q, D, Q.shape[1] // 2)  # (n_q, n_d); documents encoded once
    # Fine channel
    # Fuse the channels
    fused = fuse([S, prefix2, prefix1], [W_S, W_PREFIX, W_PREFIX], mask=mask)
    # Reshape back to S shape
    fused = fused.reshape(S.shape[0], S.shape[1])
    return fused.astype(np.float32)
