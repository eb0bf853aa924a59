"""Bidirectional z-scores fused by RRF with the cosine (a valid program for the tests)."""

import numpy as np

from embedding_ttc.programs.primitives.scores import candidate_mask, rrf, zscore_cols, zscore_rows

WEIGHT = 0.5
SEED = np.random.default_rng(0).standard_normal(4).astype(np.float32)


def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    z = zscore_rows(S, mask) + WEIGHT * zscore_cols(S, mask)
    fused = rrf([S, z], mask=mask)
    norms = np.linalg.norm(Q, axis=1, keepdims=True)
    return (fused + 1e-3 * z * norms + 0.0 * SEED[0]).astype(np.float32)
