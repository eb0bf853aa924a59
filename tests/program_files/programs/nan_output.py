"""Returns a NaN score."""

import numpy as np


def program(Q, D, S, ctx):
    out = S.copy()
    out[0, 0] = np.nan
    return out
