"""Novelty: matryoshka cascading with colbert maxsim over sentences.
Hypothesis: the coarsest channels are the sentences, and the finer channels are the paragraphs."""
import numpy as np
from embedding_ttc.programs.primitives.channels import prefix_scores, chunk_scores, fuse, view_scores
from embedding_ttc.programs.primitives.scores import zscore_rows
from embedding_ttc.programs.primitives.channels import fuse, bm25_scores
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25

W_S = 1.0
W_BM25 = 0.5
W_P = 0.3

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)

    # Coarse channels: sentences
    P1 = prefix_scores(Q, D, Q.shape[1] // 4)
    P2 = prefix_scores(Q, D, Q.shape[1] // 2)

    # Fine channel: document
    S_fine = S

    # Fuse the channels
    channels = [S_fine, P1, P2]
    weights = [W_S, W_BM25, W_P]
    mask = mask  # None or (n_q, n_d) bool
    fused = fuse(channels, weights, mask=mask)

    return fused.astype(np.float32)
