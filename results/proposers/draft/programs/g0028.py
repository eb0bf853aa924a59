from embedding_ttc.programs.primitives.channels import fuse, bm25_scores, prf_scores, view_scores
from embedding_ttc.programs.primitives.lexical import query_term_coverage
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows, zscore_cols, rrf, top_k_indices
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage
W_S = 1.0
W_BM25 = 0.5
W_QTC = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    B = bm25_scores(ctx)
    C = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    P = prf_scores(Q, D, S, k=3, alpha=0.5, mask=mask)
    P2 = prf_scores(Q, D, P, k=3, alpha=0.5, mask=mask)
    return fuse([S, B, C, P, P2], [W_S, W_BM25, W_QTC, 1.0, 1.0], mask=mask, method='rrf')
