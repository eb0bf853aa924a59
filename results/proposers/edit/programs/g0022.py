"""An edit of g0002

Novelty: 
Hypothesis: 
Parent: g0002
Edit: 1 block(s) placed (exact)
"""
from embedding_ttc.programs.primitives.channels import query_view_scores
from embedding_ttc.programs.primitives.channels import bm25_scores, mask_for
from embedding_ttc.programs.primitives.scores import rrf


def program(Q, D, S, ctx):
    # Add a new channel that scores the query based on the cosine similarity of the documents
    query_cosines = query_view_scores(D, ctx, view='text-matching')  # an example: this block changes only the comment
    mask = mask_for(ctx, query_cosines)  # an example: this block adds a new channel
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts
    return rrf([lexical, S], mask=mask)  # float32 (n_q, n_d)
