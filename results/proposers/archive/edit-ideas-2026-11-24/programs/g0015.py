"""adds Document substructure decomposition (the suggested idea)

Novelty: adds Document substructure decomposition (the suggested idea)
Hypothesis: 
Parent: g0002
Edit: the reply's whole program (no block applied)
"""

from embedding_ttc.programs.primitives.channels import fuse, prefix_scores
from embedding_ttc.programs.primitives.channels import chunk_scores
from embedding_ttc.programs.primitives.channels import bm25_scores, mask_for
from embedding_ttc.programs.primitives.scores import rrf


def program(Q, D, S, ctx):
    # Add the idea of Document substructure decomposition as a new channel
    prefix1 = prefix_scores(Q, D, Q.shape[1] // 4)  # (n_q, Q.shape[1] // 4)
    prefix2 = prefix_scores(Q, D, Q.shape[1] // 2)  # (n_q, Q.shape[1] // 2)
    mask = mask_for(ctx, S)  # an example: this block changes only the comment
    chunk_paragraph = chunk_scores(Q, ctx, "paragraph", "max", mask)  # (n_q, Q.shape[1] // 4)
    chunk_sentence_pair = chunk_scores(Q, ctx, "sentence_pair", "topmean", mask)  # (n_q, Q.shape[1] // 4)
    combined = fuse([S, chunk_paragraph, chunk_sentence_pair], [1, 1, 1], mask)  # float32 (n_q, n_d)
    return rrf(combined, mask)  # float32 (n_q, n_d)
