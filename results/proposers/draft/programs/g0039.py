import numpy as np
from embedding_ttc.programs.primitives.channels import fuse, bm25_scores
from embedding_ttc.programs.primitives.lexical import query_term_coverage
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows, zscore_cols, rrf
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25
W_S = 1.0
W_BM25 = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    B = bm25_scores(ctx)
    C = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    scores = np.vstack([zscore_rows(S, mask), zscore_cols(S, mask)])
    scores = np.sort(scores, axis=0)
    gap_scores = scores[:, 1] - scores[:, 0]
    weights = gap_scores / gap_scores.sum(axis=0, keepdims=True)
    fused = fuse([S, B, C], weights, mask=mask, method="rrf")
    return fused.astype(np.float32)
