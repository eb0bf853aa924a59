"""Adds Document substructure decomposition as a new channel

Novelty: Adds Document substructure decomposition as a new channel
Hypothesis: Combines the best sentence and the mean sentence pair to create a new channel and fuses it with S
Parent: g0031
Edit: the reply's whole program (no block applied)
"""
from embedding_ttc.programs.primitives.scores import candidate_mask

from embedding_ttc.programs.primitives.channels import bm25_scores, chunk_scores, fuse
from embedding_ttc.programs.primitives.lexical import query_term_coverage

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)  # build the candidate mask from ctx.candidates
    B = bm25_scores(ctx)  # B: Okapi BM25 of every document for every query
    C = query_term_coverage(ctx.query_texts, ctx.doc_texts)  # C: Fraction of each query's distinct terms that occur in each document

    # Document substructure decomposition
    # chunk_scores(Q, ctx, "paragraph", "max", mask) computes the best sentence pair for each document
    # chunk_scores(Q, ctx, "sentence_pair", "topmean", mask) computes the mean sentence pair for each document
    A = chunk_scores(Q, ctx, "sentence_pair", "topmean", mask)  # A: Mean sentence pair for each document

    # Fuse channels
    channels = [S, B, A]  # list of channels
    weights = [1.0, 0.5, 0.5]  # weights for each channel
    S = fuse(channels, weights, mask=mask, method="rrf")  # fuse channels with S by rank (Cormack et al. 2009), or by z-scores with weights
    return S.copy()  # an example: this block changes only the comment
