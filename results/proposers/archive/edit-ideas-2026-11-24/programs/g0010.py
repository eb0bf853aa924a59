"""adds Document substructure decomposition (the suggested idea)

Novelty: adds Document substructure decomposition (the suggested idea)
Hypothesis: 
Parent: g0002
Edit: 1 block(s) placed (exact)
"""
from embedding_ttc.programs.primitives.channels import chunk_scores, fuse
from embedding_ttc.programs.primitives.channels import prefix_scores
from embedding_ttc.programs.primitives.channels import bm25_scores, mask_for
from embedding_ttc.programs.primitives.scores import rrf


def program(Q, D, S, ctx):
    # Add the idea of Document substructure decomposition
    chunk_scores1 = chunk_scores(Q, ctx, "paragraph", "max", mask)  # (n_q, Q.shape[1] // 2)
    chunk_scores2 = chunk_scores(Q, ctx, "sentence_pair", "topmean", mask)  # (n_q, Q.shape[1] // 2)
    mask = mask_for(ctx, S)  # an example: this block changes only the comment
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts
    A = chunk_scores1  # (n_q, Q.shape[1] // 2)
    B = chunk_scores2  # (n_q, Q.shape[1] // 2)
    channel = fuse([lexical, S, A, B], [1, 1, 1, 1], mask)  # fuse the channels
    return channel  # float32 (n_q, n_d)
