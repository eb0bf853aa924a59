"""
Novelty: Lexical channels with reciprocal rank fusion with Rocchio pseudo-relevance feedback.
Hypothesis: Moves each query toward its top-ranked documents and adds lexical evidence to it.

Import exactly as shown; nothing else exists."""
import numpy as np
from embedding_ttc.programs.primitives.channels import bm25_scores, prf_scores
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
    P2 = prf_scores(Q, D, P, k=3, alpha=0.5, mask=mask)
    fused = fuse([S, B, C, P, P2], [W_S, W_BM25, W_RRF, W_SOFT_CENTROID, W_SOFT_CENTROID], mask=mask)
    return fused.astype(np.float32)

