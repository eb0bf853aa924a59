"""An edit of g0001

Novelty: 
Hypothesis: The cosine similarity channel will help the program to rank the documents based on the relevance of the query to the documents, which can lead to better nDCG@10.
Parent: g0001
Edit: 1 block(s) placed (exact)
"""
from embedding_ttc.programs.primitives.channels import query_view_scores
from embedding_ttc.programs.primitives.channels import bm25_scores, mask_for
from embedding_ttc.programs.primitives.scores import rrf


def program(Q, D, S, ctx):
    mask = mask_for(ctx, S)  # an example: this block changes only the comment
    lexical = query_view_scores(D, ctx, view='text-matching')  # (n_q, n_d) Cosine over the first `dims` dimensions, each row renormalised
    return rrf([lexical, S], mask=mask)  # float32 (n_q, n_d)
