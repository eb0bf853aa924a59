"""adds Matryoshka cascading (dimension truncation) (the suggested idea)

Novelty: adds Matryoshka cascading (dimension truncation) (the suggested idea)
Hypothesis: 
Parent: g0039
Edit: 1 block(s) placed (exact)
"""
from embedding_ttc.programs.primitives.channels import prefix_scores

from embedding_ttc.programs.primitives.channels import bm25_scores, fuse
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.lexical import query_term_coverage
from embedding_ttc.programs.primitives.channels import prf_scores

def program(Q, D, S, ctx):
    weights = [1.0, 0.5, 0.5]  # weights for each channel
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)  # build the candidate mask from ctx.candidates
    P1 = prefix_scores(Q, D, Q.shape[1] // 4)  # coarse channel 1
    P2 = prefix_scores(Q, D, Q.shape[1] // 2)  # coarse channel 2
    B = fuse([S, P2, P1], [weights], mask=mask)  # fuse channels with S by prefix
    C = query_term_coverage(ctx.query_texts, ctx.doc_texts)  # C: Fraction of each query's distinct terms that occur in each document
    channels = [S, B, C]  # list of channels
    P = prf_scores(Q, D, S, k=3, alpha=0.5, mask=mask)  # P: prf scores of each query's top 3 documents
    P2 = prf_scores(Q, D, P, k=3, alpha=0.5, mask=mask)  # P2: prf scores of each query's top 3 documents after being moved toward its top 3 documents
    channels.append(P2)  # add the second round of prf scores
    weights.append(0.5)  # add the weight for the second round of prf scores
    S = fuse(channels, weights, mask=mask, method="rrf")  # fuse channels with S by rank (Cormack et al. 2009), or by z-scores with weights
    return S.copy()  # an example: this block changes only the comment
