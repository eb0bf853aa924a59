"""adds Rocchio pseudo-relevance feedback (the suggested idea)

Novelty: adds Rocchio pseudo-relevance feedback (the suggested idea)
Hypothesis: 
Parent: g0031
Edit: 1 block(s) placed (exact)
"""
from embedding_ttc.programs.primitives.channels import bm25_scores, fuse
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.lexical import query_term_coverage
from embedding_ttc.programs.primitives.channels import prf_scores

def program(Q, D, S, ctx):
    B = bm25_scores(ctx)  # B: Okapi BM25 of every document for every query
    C = query_term_coverage(ctx.query_texts, ctx.doc_texts)  # C: Fraction of each query's distinct terms that occur in each document
    channels = [S, B, C]  # list of channels
    weights = [1.0, 0.5, 0.5]  # weights for each channel
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)  # build the candidate mask from ctx.candidates
    P = prf_scores(Q, D, S, k=3, alpha=0.5, mask=None)  # Move each query toward its top-ranked documents: P = prf_scores(Q, D, S, k=3, alpha=ALPHA, mask=mask)
    P2 = prf_scores(Q, D, P, k=3, alpha=0.5, mask=mask)  # Add a second round fed by the first one's ranking, P2 = prf_scores(Q, D, P, k=3, alpha=ALPHA2, mask=mask)
    S = fuse([S, P, P2], [weights], mask=mask)  # fuse channels with S: fuse([S, P, P2], [weights], mask)
    return S.copy()  # an example: this block changes only the comment
