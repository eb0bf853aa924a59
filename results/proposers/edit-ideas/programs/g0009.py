"""adds ColBERT MaxSim over sentences (the suggested idea)

Novelty: adds ColBERT MaxSim over sentences (the suggested idea)
Hypothesis: 
Parent: g0002
Edit: 4 block(s) placed (exact, exact, exact, exact)
"""
from embedding_ttc.programs.primitives.channels import bm25_scores
from embedding_ttc.programs.primitives.channels import prefix_scores
from embedding_ttc.programs.primitives.channels import chunk_scores, mask_for
from embedding_ttc.programs.primitives.scores import rrf


def program(Q, D, S, ctx):
    # Add the idea of ColBERT MaxSim over sentences as a new channel
    prefix1 = prefix_scores(Q, D, Q.shape[1] // 4)  # an example: this block changes only the comment
    prefix2 = prefix_scores(Q, D, Q.shape[1] // 2)  # an example: this block changes only the comment
    mask = mask_for(ctx, S)  # an example: this block changes only the comment
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts
    maxsim_sentences = chunk_scores(Q, ctx, "sentence", "max", mask)  # an example: this block changes only the comment
    maxsim_paras = chunk_scores(Q, ctx, "paragraph", "topmean", mask)  # an example: this block changes only the comment
    fused_channels = [lexical, S, maxsim_sentences, maxsim_paras]
    fused_weights = [1.0, 1.0, 1.0, 1.0]  # same weight for each channel
    mask = mask_for(ctx, S)  # an example: this block changes only the comment
    return rrf(fused_channels, mask=fused_weights, k=mask)  # float32 (n_q, n_d)
