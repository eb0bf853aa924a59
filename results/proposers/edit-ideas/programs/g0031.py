"""adds Lexical channels with reciprocal rank fusion (the suggested idea)

Novelty: adds Lexical channels with reciprocal rank fusion (the suggested idea)
Hypothesis: 
Parent: g0000-P0
Edit: the reply's whole program (no block applied)
"""
from embedding_ttc.programs.primitives.channels import bm25_scores, fuse
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.lexical import query_term_coverage


def program(Q, D, S, ctx):
    B = bm25_scores(ctx)  # B: Okapi BM25 of every document for every query
    C = query_term_coverage(ctx.query_texts, ctx.doc_texts)  # C: Fraction of each query's distinct terms that occur in each document
    channels = [S, B, C]  # list of channels
    weights = [1.0, 0.5, 0.5]  # weights for each channel
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)  # build the candidate mask from ctx.candidates
    S = fuse(channels, weights, mask=mask, method="rrf")  # fuse channels with S by rank (Cormack et al. 2009), or by z-scores with weights
    return S.copy()  # an example: this block changes only the comment
