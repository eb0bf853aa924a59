"""adds Rocchio pseudo-relevance feedback (the suggested idea)

Novelty: adds Rocchio pseudo-relevance feedback (the suggested idea)
Hypothesis: 
Parent: g0002
Edit: the reply's whole program (no block applied)
"""
from embedding_ttc.programs.primitives.channels import bm25_scores, prefix_scores

from embedding_ttc.programs.primitives.channels import prf_scores
from embedding_ttc.programs.primitives.scores import rrf
from embedding_ttc.programs.primitives.feedback import soft_centroid_query

def program(Q, D, S, ctx):
    # Add the idea of Rocchio pseudo-relevance feedback as a new channel
    prefix1 = prefix_scores(Q, D, Q.shape[1] // 4)  # (n_q, Q.shape[1] // 4)
    P = prf_scores(Q, D, S, k=3, alpha=0.5, mask=None)  # moved query's cosine matrix
    P2 = prf_scores(Q, D, P, k=3, alpha=0.5, mask=None)  # second round fed by the first one's ranking
    mask = mask_for(ctx, S)  # an example: this block changes only the comment
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts
    return rrf([lexical, S, P, P2], mask=mask)  # float32 (n_q, n_d)
