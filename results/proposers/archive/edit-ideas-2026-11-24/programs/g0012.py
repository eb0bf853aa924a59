"""adds ColBERT MaxSim over sentences (the suggested idea)

Novelty: adds ColBERT MaxSim over sentences (the suggested idea)
Hypothesis: 
Parent: g0002
Edit: 1 block(s) placed (exact)
"""

from embedding_ttc.programs.primitives.channels import bm25_scores, fuse, prefix_scores
from embedding_ttc.programs.primitives.channels import chunk_scores
from embedding_ttc.programs.primitives.scores import rrf

def program(Q, D, S, ctx):
    # Add the idea of ColBERT MaxSim over sentences as a new channel
    prefix1 = prefix_scores(Q, D, Q.shape[1] // 4)  # (n_q, Q.shape[1] // 4)
    prefix2 = prefix_scores(Q, D, Q.shape[1] // 2)  # (n_q, Q.shape[1] // 2)
    mask = mask_for(ctx, S)  # an example: this block changes only the comment
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts
    M = chunk_scores(Q, ctx, "sentence", "max", mask)  # (n_q, Q.shape[1] // 4)
    M2 = chunk_scores(Q, ctx, "paragraph", "topmean", mask)  # (n_q, Q.shape[1] // 4)
    fused = fuse([lexical, S, M, M2], [weights], mask)
    return fused  # float32 (n_q, n_d)
