import numpy as np
from embedding_ttc.programs.primitives.channels import fuse, chunk_scores, prefix_scores
from embedding_ttc.programs.primitives.scores import candidate_mask, top_k_indices

# Define a new constant for the weight of the coarse channels
COARSE_CHANNEL_WEIGHT = 0.5

def program(Q, D, S, ctx):
    # Step 1: Score each document by its best sentence
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    M = chunk_scores(Q, ctx, "sentence", "max", mask)

    # Step 2: Score with prefixes of the dimensions as coarse channels
    P1 = prefix_scores(Q, D, Q.shape[1] // 4)
    P2 = prefix_scores(Q, D, Q.shape[1] // 2)

    # Step 3: Fuse the coarse channels with the fine channel and the sentence scores
    fuse_channels = [S, P2, P1]
    fuse_weights = [COARSE_CHANNEL_WEIGHT, 0.5, 0.5]
    out = fuse(fuse_channels, fuse_weights, mask=mask)

    return out.astype(np.float32)
