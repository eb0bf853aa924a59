"""add a new channel that scores the query based on the cosine similarity of the documents

Novelty: add a new channel that scores the query based on the cosine similarity of the documents
Hypothesis: adding a channel that scores the query based on the cosine similarity of the documents can help the program to rank the documents based on the relevance of the query to the documents, which can lead to better nDCG@10.
Parent: g0054
Edit: 1 block(s) placed (exact)
"""
from embedding_ttc.programs.primitives.lexical import query_term_coverage
from embedding_ttc.programs.primitives.channels import query_view_scores
from embedding_ttc.programs.primitives.channels import bm25_scores, mask_for
from embedding_ttc.programs.primitives.scores import rrf


def program(Q, D, S, ctx):
    # Add a new channel that scores the query based on the cosine similarity of the documents
    query_cosines = query_view_scores(D, ctx, view='text-matching')  # an example: this block changes only the comment
    mask = mask_for(ctx, query_cosines)  # an example: this block adds a new channel
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts
    # Add a new channel that scores the query based on the lexical similarity of the query and document texts
    lexical_score = query_term_coverage(ctx.query_texts, ctx.doc_texts)
    # Fuse the new channel with the existing channels
    return rrf([lexical, lexical_score, S], mask=mask)  # float32 (n_q, n_d)
