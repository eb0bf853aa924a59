import numpy as np
from embedding_ttc.programs.primitives.channels import fuse, bm25_scores, rrf, prefix_scores
from embedding_ttc.programs.primitives.lexical import query_term_coverage
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage
W_S = 1.0
W_BM25 = 0.5
W_QTC = 0.5
W_P1 = 0.3
W_P2 = 0.7

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    B = bm25_scores(ctx)
    C = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    P1 = prefix_scores(Q, D, Q.shape[1] // 4)
    P2 = prefix_scores(Q, D, Q.shape[1] // 2)
    return fuse([S, B, C, P2, P1], [W_S, W_BM25, W_QTC, W_P2, W_P1], mask=mask, method='rrf')
