"""Adds a new channel that uses the score distribution of each query to adjust the candidate scores.

Novelty: Adds a new channel that uses the score distribution of each query to adjust the candidate scores.
Hypothesis: By using the score distribution of each query to adjust the candidate scores, the program can better capture the nuances of the queries and improve the relevance scores of the retrieved documents. This channel can be added to the program's fusion (a new line computing the channel, and the channel added to the list the program fuses).
Parent: g0002
Edit: 1 block(s) placed (exact)
"""
from embedding_ttc.programs.primitives.channels import prefix_scores
from embedding_ttc.programs.primitives.channels import bm25_scores, mask_for
from embedding_ttc.programs.primitives.scores import rrf


def program(Q, D, S, ctx):
    # Add the idea of Matryoshka cascading (dimension truncation) as a new channel
    prefix1 = prefix_scores(Q, D, Q.shape[1] // 4)  # an example: this block changes only the comment
    prefix2 = prefix_scores(Q, D, Q.shape[1] // 2)  # (n_q, Q.shape[1] // 2)
    mask = mask_for(ctx, S)  # an example: this block changes only the comment
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts
    return rrf([lexical, S], mask=mask)  # float32 (n_q, n_d)
