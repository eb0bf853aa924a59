"""define the weights variable in the file, or use a listed helper instead.

Novelty: define the weights variable in the file, or use a listed helper instead.
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

    # Add Rocchio pseudo-relevance feedback
    prf1 = prf_scores(Q, D, S, k=3, alpha=0.5, mask=mask)
    prf2 = prf_scores(Q, D, prf1, k=3, alpha=0.5, mask=mask)
    fused_channel = fuse([S, prf1, prf2], [], mask=mask)

    return fused_channel  # float32 (n_q, n_d)
