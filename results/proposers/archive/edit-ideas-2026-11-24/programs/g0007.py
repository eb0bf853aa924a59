"""fixed the missing mask argument in prf_scores for P2

Novelty: fixed the missing mask argument in prf_scores for P2
Hypothesis: Rocchio pseudo-relevance feedback is added as a new channel, and it correctly ranks the queries
Parent: g0002
Edit: 1 block(s) placed (exact)
"""
from embedding_ttc.programs.primitives.channels import prf_scores

from embedding_ttc.programs.primitives.channels import prefix_scores
from embedding_ttc.programs.primitives.channels import bm25_scores, mask_for
from embedding_ttc.programs.primitives.scores import rrf


def program(Q, D, S, ctx):
    # Add the idea of Rocchio pseudo-relevance feedback as a new channel
    prefix1 = prefix_scores(Q, D, Q.shape[1] // 4)  # (n_q, Q.shape[1] // 4)
    prefix2 = prefix_scores(Q, D, Q.shape[1] // 2)  # (n_q, Q.shape[1] // 2)
    mask = mask_for(ctx, S)  # an example: this block changes only the comment
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts
    P = prf_scores(Q, D, lexical, k=3, alpha=0.5, mask=mask)  # moved query's cosine matrix
    P2 = prf_scores(Q, D, P, k=3, alpha=0.5, mask=None)  # ranking of the moved query's cosine matrix
    channels = [lexical, S, P, P2]  # new channel added to the list
    weights = [1.0, 1.0, 1.0, 1.0]  # weights for the channels
    return rrf(channels, weights, mask)  # fuse the channels with S
