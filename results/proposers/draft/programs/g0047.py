from embedding_ttc.programs.primitives.channels import bm25_scores, prf_scores
from embedding_ttc.programs.primitives.lexical import query_term_coverage
import numpy as np
from embedding_ttc.programs.primitives.channels import fuse, query_view_scores
from embedding_ttc.programs.primitives.scores import candidate_mask, top_k_indices
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25
W_S = 1.0
W_BM25 = 0.5
W_QM = 1.0


def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)  # None or (n_q, n_d) bool
    B = bm25_scores(ctx)
    C = query_term_coverage(ctx.query_texts, ctx.doc_texts)  # (n_q, n_d) float32; the coverage of each query with each document
    P = prf_scores(Q, D, S, k=3, alpha=0.7, mask=mask)  # (n_q, n_d) float32; the pseudo-relevance feedback of each query
    P2 = prf_scores(Q, D, P, k=3, alpha=0.7, mask=mask)  # (n_q, n_d) float32; the pseudo-relevance feedback of the moved query
    fused = fuse([S, B, C, P, P2], [W_S, W_BM25, W_QM, W_QM, W_QM], mask=mask)  # float32 (n_q, n_d)
    return fused.astype(np.float32)
