from embedding_ttc.programs.primitives.channels import chunk_scores, prefix_scores
# Novelty: combines the best sentence with the top-mean paragraph scores.
# Hypothesis: it's a combination of the best sentence (M) with the top-mean paragraph scores (M2) and the coarse channel P1 and P2.
import numpy as np
from embedding_ttc.programs.primitives.channels import fuse, bm25_scores
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.chunking import Chunks, chunk_documents
from embedding_ttc.programs.primitives.lexical import BM25

W_S = 1.0
W_BM25 = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    BM = bm25_scores(ctx)
    M = chunk_scores(Q, ctx, "sentence", "max", mask)
    P1 = prefix_scores(Q, D, Q.shape[1] // 4)
    P2 = prefix_scores(Q, D, Q.shape[1] // 2)
    M2 = chunk_scores(Q, ctx, "paragraph", "topmean", mask)
    fused = fuse([S, M, P1, P2, M2], [W_S, W_BM25, 0.0, 0.0, 1.0], mask=mask)
    return fused.astype(np.float32)
