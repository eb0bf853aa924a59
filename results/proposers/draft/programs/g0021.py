import numpy as np
from embedding_ttc.programs.primitives.channels import fuse, bm25_scores, prf_scores
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import query_term_coverage, BM25
W_S = 1.0
W_BM25 = 0.5
W_QTC = 0.5
ALPHA = 0.7
ALPHA2 = 0.5
K = 3
K2 = 3

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    B = bm25_scores(ctx)  # (n_q, n_d) BM25 scores of every document for every query
    C = query_term_coverage(ctx.query_texts, ctx.doc_texts)  # (n_q, n_d) query_term_coverage scores of every query for every document
    P = prf_scores(Q, D, S, k=K, alpha=ALPHA, mask=mask)  # (n_q, n_d) cosine matrix of the moved query
    P2 = prf_scores(Q, D, P, k=K2, alpha=ALPHA2)  # (n_q, n_d) cosine matrix of the second round of the moved query
    return fuse([S, B, C, P, P2], [W_S, W_BM25, W_QTC, 1.0, 1.0], mask=mask, method="rrf")
