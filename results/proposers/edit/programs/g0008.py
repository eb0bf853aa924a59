"""added zscore_rows to normalise the cosine scores

Novelty: added zscore_rows to normalise the cosine scores
Hypothesis: This normalisation step should help raise nDCG@10 by standardising the scores across documents and queries, which aligns with the goal of improving retrieval performance by making the cosine scores more comparable.
Parent: g0000-P0
Edit: 1 block(s) placed (exact)
"""
from embedding_ttc.programs.primitives.scores import zscore_rows


def program(Q, D, S, ctx):
    S = zscore_rows(S)  # normalisation
