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
from embedding_ttc.programs.primitives.chunking import chunk_sentences


def program(Q, D, S, ctx):
    # Add the idea of ColBERT MaxSim over sentences as a new channel
    prefix1 = prefix_scores(Q, D, Q.shape[1] // 4)  # (n_q, Q.shape[1] // 4)
    prefix2 = prefix_scores(Q, D, Q.shape[1] // 2)  # (n_q, Q.shape[1] // 2)
    mask = mask_for(ctx, S)  # an example: this block changes only the comment
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts

    fused_scores = fuse([lexical, S, max_sentence_scores], [1], mask=mask)  # float32 (n_q, n_d)
    return fused_scores
