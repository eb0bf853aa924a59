import numpy as np
from embedding_ttc.programs.primitives.channels import prefix_scores
from embedding_ttc.programs.primitives.channels import bm25_scores
from embedding_ttc.programs.primitives.lexical import query_term_coverage
from embedding_ttc.programs.primitives.channels import fuse
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25

W_S = 1.0
W_BM25 = 0.5
W_PREFIXES = 0.3
W_BM25_COVERAGE = 0.2

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    P1 = prefix_scores(Q, D, Q.shape[1] // 4)
    P2 = prefix_scores(Q, D, Q.shape[1] // 2)
    B = bm25_scores(ctx)
    C = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    fused = fuse([S, P2, P1, B, C], [W_S, W_BM25, W_PREFIXES, W_BM25_COVERAGE], mask=mask)
    return fused.astype(np.float32)
