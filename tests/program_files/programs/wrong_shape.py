"""Returns a matrix with one column too many."""

import numpy as np


def program(Q, D, S, ctx):
    return np.zeros((S.shape[0], S.shape[1] + 1), dtype=np.float32)
