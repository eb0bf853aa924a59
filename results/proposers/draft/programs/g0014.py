"""Novelty: adds lexical evidence (BM25 and query_term_coverage) to the cosine scores, using reciprocal rank fusion.
Hypothesis: the best documents share the vocabulary the query lacks."""
import numpy as np
from embedding_ttc.programs.primitives.channels import fuse, bm25_scores, rrf, prefix_scores
from embedding_ttc.programs.primitives.lexical import query_term_coverage
from embedding_ttc.programs.primitives.scores import candidate_mask, top_k_indices, zscore_rows, zscore_cols
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage

W_S = 1.0
W_BM25 = 0.5
W_QTC = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    B = bm25_scores(ctx)
    C = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    scores = S.copy()
    scores = np.add(scores, zscore_rows(scores, mask))
    scores = np.add(scores, zscore_cols(scores, mask))
    scores = fuse([S, B, C], [W_S, W_BM25, W_QTC], mask=mask, method='rrf')
    return scores.astype(np.float32)
