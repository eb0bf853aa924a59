"""
Novelty: adds a second round of Rocchio pseudo-relevance feedback using colbert maxsim over sentences.
Hypothesis: moves each query toward its top-ranked documents and then adds a second round with the first one's ranking, which is then fused with the original cosine scores.

Import exactly as shown; nothing else exists.
"""
from embedding_ttc.programs.primitives.channels import prf_scores

from embedding_ttc.programs.primitives.channels import fuse, bm25_scores, rrf, chunk_scores, prefix_scores
from embedding_ttc.programs.primitives.lexical import query_term_coverage
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage
W_S = 1.0
W_BM25 = 0.5
W_QTC = 0.5

K = 3
ALPHA = 0.7
K2 = 3
ALPHA2 = 0.7

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    B = bm25_scores(ctx)
    C = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    # First round of Rocchio pseudo-relevance feedback
    P = prf_scores(Q, D, S, k=K, alpha=ALPHA, mask=mask)
    # Second round of Rocchio pseudo-relevance feedback
    P2 = prf_scores(Q, D, P, k=K2, alpha=ALPHA2, mask=mask)
    # Fuse the channels
    return fuse([S, P, P2], [W_S, W_BM25, W_QTC], mask=mask, method='rrf')
