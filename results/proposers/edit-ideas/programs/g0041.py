"""Adds Rocchio pseudo-relevance feedback as a new channel

Novelty: Adds Rocchio pseudo-relevance feedback as a new channel
Hypothesis: 
Parent: g0031
Edit: 9 block(s) placed (exact, exact, exact, exact, exact, exact, exact, exact, exact)
"""
from embedding_ttc.programs.primitives.channels import bm25_scores, fuse
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.lexical import query_term_coverage
from embedding_ttc.programs.primitives.channels import prf_scores

def program(Q, D, S, ctx):
    B = bm25_scores(ctx)  # an example: this block changes only the comment
    C = query_term_coverage(ctx.query_texts, ctx.doc_texts)  # an example: this block changes only the comment
    channels = [S, B, C]  # an example: this block changes only the comment
    weights = [1.0, 0.5, 0.5]  # an example: this block changes only the comment
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)  # an example: this block changes only the comment
    P = prf_scores(Q, D, S, k=10, alpha=0.5, mask=mask)  # an example: this block changes only the comment
    P2 = prf_scores(Q, D, P, k=10, alpha=0.5, mask=mask)  # an example: this block changes only the comment
    channels.append(P2)  # an example: this block changes only the comment
    S = fuse(channels, weights, mask=mask, method="rrf")  # an example: this block changes only the comment
    return S.copy()  # an example: this block changes only the comment
