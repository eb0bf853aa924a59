"""adds Rocchio pseudo-relevance feedback (the suggested idea)

Novelty: adds Rocchio pseudo-relevance feedback (the suggested idea)
Hypothesis: 
Parent: g0000-P0
Edit: 1 block(s) placed (exact)
"""

from embedding_ttc.programs.primitives.channels import fuse, prf_scores
from embedding_ttc.programs.primitives.scores import rrf

def program(Q, D, S, ctx):
    P = prf_scores(Q, D, S, k=3, alpha=0.5, mask=ctx.candidates)
    P2 = prf_scores(Q, D, P, k=3, alpha=0.5, mask=ctx.candidates)
    S = fuse([S, P, P2], [1.0], mask=ctx.candidates)  # define weights here
    return S
