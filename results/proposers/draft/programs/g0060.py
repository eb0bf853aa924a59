from embedding_ttc.programs.primitives.channels import prf_scores
# Novelty: combines Rocchio pseudo-relevance feedback with colbert maxsim over sentences.
# Hypothesis: the best sentences share the vocabulary the query lacks.

import numpy as np
from embedding_ttc.programs.primitives.channels import bm25_scores, chunk_scores
from embedding_ttc.programs.primitives.lexical import query_term_coverage
from embedding_ttc.programs.primitives.channels import fuse, view_scores
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25
W_S = 1.0
W_BM25 = 0.5
W_RRF = 1.0
W_SOFT_CENTROID = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    B = bm25_scores(ctx)
    C = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    P = prf_scores(Q, D, S, k=3, alpha=0.5, mask=mask)
    M = chunk_scores(Q, ctx, "sentence", "max", mask)
    M2 = chunk_scores(Q, ctx, "paragraph", "topmean", mask)
    fused = fuse([S, P, M, M2], [W_S, W_BM25, W_RRF, W_SOFT_CENTROID], mask=mask)
    return fused.astype(np.float32)
