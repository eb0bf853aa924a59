import numpy as np
from embedding_ttc.programs.primitives.channels import prf_scores
from embedding_ttc.programs.primitives.lexical import query_term_coverage
from embedding_ttc.programs.primitives.channels import fuse, bm25_scores
from embedding_ttc.programs.primitives.scores import zscore_rows, candidate_mask
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25

# Module-level constants
W_S = 1.0
W_BM25 = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    B = bm25_scores(ctx)
    C = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    P = prf_scores(Q, D, S, k=3, alpha=0.5, mask=mask)
    P2 = prf_scores(Q, D, P, k=3, alpha=0.5, mask=mask)
    fused = fuse([S, B, C, P, P2], [W_S, W_BM25, W_BM25, W_S, W_S], mask=mask, method="rrf")
    return fused.astype(np.float32)
