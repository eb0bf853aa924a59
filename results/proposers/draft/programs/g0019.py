import numpy as np
from embedding_ttc.programs.primitives.channels import chunk_scores, prefix_scores, fuse
from embedding_ttc.programs.primitives.scores import candidate_mask, rrf
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage

W_S = 1.0
W_PREFIX = 0.5
W_PARAGRAPH = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)

    # Score each document by its best sentence
    M = chunk_scores(Q, ctx, "sentence", "max", mask)

    # Score with prefixes of the dimensions as coarse channels
    P1 = prefix_scores(Q, D, Q.shape[1] // 4)
    P2 = prefix_scores(Q, D, Q.shape[1] // 2)

    # Fuse S with the coarse channels and the document scores
    M2 = rrf(M)
    return fuse([S, P2, P1], [W_S, W_PREFIX, W_PARAGRAPH], mask=mask)
