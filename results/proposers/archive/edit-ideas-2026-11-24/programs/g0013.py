"""Adds the ColBERT MaxSim over sentences as a new channel

Novelty: Adds the ColBERT MaxSim over sentences as a new channel
Hypothesis: This edit introduces a new channel that scores each document by its best sentence and then fuses this with the document embeddings to improve nDCG@10. The new channel is added to the fusion list, ensuring that the program's scores are updated accordingly.
Parent: g0002
Edit: 1 block(s) placed (code)
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
    return rrf([lexical, S], mask)  # float32 (n_q, n_d)
