"""adds ColBERT MaxSim over sentences (the suggested idea)

Novelty: adds ColBERT MaxSim over sentences (the suggested idea)
Hypothesis: 
Parent: g0002
Edit: 1 block(s) placed (exact)
"""
from embedding_ttc.programs.primitives.channels import chunk_scores, fuse
from embedding_ttc.programs.primitives.channels import prefix_scores
from embedding_ttc.programs.primitives.channels import bm25_scores, mask_for
from embedding_ttc.programs.primitives.scores import rrf


def program(Q, D, S, ctx):
    # Add the idea of Matryoshka cascading (dimension truncation) as a new channel
    # Add the idea above (ColBERT MaxSim over sentences)
    maxsim_scores = chunk_scores(Q, ctx, "sentence", "max", mask)  # (n_q, n_d) MaxSim scores of each document by its best sentence
    fused_scores = fuse([S, maxsim_scores], [1, 1], mask)  # Fuse the original scores and the MaxSim scores
    prefix2 = prefix_scores(Q, D, Q.shape[1] // 2)  # (n_q, Q.shape[1] // 2)
    mask = mask_for(ctx, S)  # an example: this block changes only the comment
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts
    return rrf([lexical, S], mask)  # float32 (n_q, n_d)
