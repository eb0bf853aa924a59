from embedding_ttc.programs.primitives.channels import chunk_scores, prefix_scores
import numpy as np
from embedding_ttc.programs.primitives.channels import fuse, bm25_scores
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.chunking import Chunks, chunk_documents, split_sentences
from embedding_ttc.programs.primitives.lexical import BM25

W_S = 1.0
W_BM25 = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    P1 = prefix_scores(Q, D, Q.shape[1] // 4)  # (n_q, n_d); documents encoded once
    P2 = prefix_scores(Q, D, Q.shape[1] // 2)  # (n_q, n_d); documents encoded once
    A = chunk_scores(Q, ctx, "paragraph", "max", mask)  # (n_q, n_d); documents encoded once
    B = chunk_scores(Q, ctx, "sentence_pair", "topmean", mask)  # (n_q, n_d); documents encoded once
    fused = fuse([S, A, B, P2, P1], [W_S, W_BM25, W_S, W_BM25, W_BM25], mask=mask)
    return fused
