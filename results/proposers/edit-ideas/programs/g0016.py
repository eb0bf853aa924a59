"""adds Rocchio pseudo-relevance feedback (the suggested idea)

Novelty: adds Rocchio pseudo-relevance feedback (the suggested idea)
Hypothesis: 
Parent: g0002
Edit: 1 block(s) placed (exact)
"""
from embedding_ttc.programs.primitives.channels import fuse
from embedding_ttc.programs.primitives.channels import prefix_scores
from embedding_ttc.programs.primitives.channels import bm25_scores, mask_for
from embedding_ttc.programs.primitives.scores import rrf
from embedding_ttc.programs.primitives.channels import prf_scores

def program(Q, D, S, ctx):
    # Add the idea of Rocchio pseudo-relevance feedback as a new channel
    prefix1 = prefix_scores(Q, D, Q.shape[1] // 4)  # (n_q, Q.shape[1] // 4)
    prefix2 = prefix_scores(Q, D, Q.shape[1] // 2)  # (n_q, Q.shape[1] // 2)
    mask = mask_for(ctx, S)  # an example: this block changes only the comment
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts
    P = prf_scores(Q, D, lexical, k=3, alpha=0.5, mask=mask)  # moved query's cosine matrix
    P2 = prf_scores(Q, D, P, k=3, alpha=0.5, mask=mask)  # second round fed by the first one's ranking
    fused = fuse([S, P, P2], [weights], mask=mask)  # fuse the channels with S
    return fused  # float32 (n_q, n_d)
