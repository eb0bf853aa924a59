"""the new channel scores the query based on the cosine similarity of the documents, which helps the program to rank the documents based on the relevance of the query to the documents, which can lead to better nDCG@10.

Novelty: the new channel scores the query based on the cosine similarity of the documents, which helps the program to rank the documents based on the relevance of the query to the documents, which can lead to better nDCG@10.
Hypothesis: the new channel scores the query based on the cosine similarity of the documents; it allows the program to consider the similarity between the query and the documents in the document side, which can improve the ranking of the documents based on their relevance to the query.
Parent: g0002
Edit: 1 block(s) placed (exact)
"""
from embedding_ttc.programs.primitives.channels import query_view_scores
from embedding_ttc.programs.primitives.channels import bm25_scores, mask_for
from embedding_ttc.programs.primitives.scores import rrf


def program(Q, D, S, ctx):
    # Add a new channel that scores the query based on the cosine similarity of the documents
    query_cosines = query_view_scores(D, ctx, view='text-matching')  # an example: this block changes the query_view_scores
    mask = mask_for(ctx, query_cosines)  # an example: this block adds a new channel
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts
    return rrf([lexical, S], mask=mask)  # float32 (n_q, n_d)
