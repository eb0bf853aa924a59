import numpy as np
from embedding_ttc.programs.primitives.channels import bm25_scores, chunk_scores
from embedding_ttc.programs.primitives.channels import fuse, view_scores
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25
W_S = 1.0
W_BM25 = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    B = bm25_scores(ctx)
    S_chunked_paragraph = chunk_scores(Q, ctx, "sentence", reduce="max", mask=None)
    S_chunked_sentence_pair = chunk_scores(Q, ctx, "sentence_pair", reduce="topmean", mask=None)
    S_chunked = np.concatenate([S_chunked_paragraph, S_chunked_sentence_pair], axis=1)
    S_fused = fuse([S, B], [W_S, W_BM25], mask=mask)
    return S_fused
