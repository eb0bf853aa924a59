"""replace the BM25 channel with a new channel that scores the query based on the cosine similarity of the documents.

Novelty: replace the BM25 channel with a new channel that scores the query based on the cosine similarity of the documents.
Hypothesis: the cosine similarity channel will help the program to rank the documents based on the relevance of the query to the documents, which can lead to better nDCG@10.
Parent: g0001
Edit: the reply's whole program (no block applied)
"""
from embedding_ttc.programs.primitives.channels import query_view_scores
from embedding_ttc.programs.primitives.channels import cosine_scores, mask_for
from embedding_ttc.programs.primitives.scores import rrf

def program(Q, D, S, ctx):
    mask = mask_for(ctx, S)  # an example: this block changes only the comment
    query_similarity = cosine_scores(D, Q)  # replace the BM25 channel with a new channel that scores the query based on the cosine similarity of the documents.
    return rrf([query_similarity, S], mask=mask)  # float32 (n_q, n_d)
