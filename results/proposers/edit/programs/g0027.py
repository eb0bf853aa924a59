"""An edit of g0000-P0

Novelty: 
Hypothesis: 
Parent: g0000-P0
Edit: 1 block(s) placed (exact)
"""


def program(Q, D, S, ctx):
    return S.copy()  # an example: this block changes only the comment
