"""An edit of g0000-P0

Novelty: 
Hypothesis: 
Parent: g0000-P0
Edit: 1 block(s) placed (exact)
"""


def program(Q, D, S, ctx):
    # Novelty: add a new channel, normalization, fusion or feedback step
    # Hypothesis: adding a new feedback step: soft_centroid_query increases nDCG@10.
    # This should raise nDCG@10.
    return S.copy()  # an example: this block changes only the comment
