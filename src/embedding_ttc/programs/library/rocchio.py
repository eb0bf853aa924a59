"""*Rocchio*, the classical Rocchio / VPRF feedback baseline.

Paper App. "Comparison with Classical Rocchio and PRF Baselines".

"The uniform mean of the top-K documents interpolated with the query with weight beta":

    q'_i = normalize((1 - beta) q_i + beta mean_{j in topK(i)} d_j),    S'_ij = q'_i · d_j

Rocchio (1971) without a negative term, which is the "Average" vector PRF of Li et al. (2023)
(:func:`~embedding_ttc.programs.primitives.feedback.vprf_update`). The paper grids
K in {2, 3, 5, 10} and beta in {0.1, 0.3, 0.5, 0.7} (the catalog's ``rocchio-grid``:
``Rocchio:K=3,beta=0.5`` and so on); the defaults K = 3, beta = 0.5 match SoftCentroid's K and
alpha, so the two differ only in the softmax weighting. No encoder call: c = 1.

Choices where the paper is silent: the top K are each query's best candidates by ``S`` (ties
by column index); the mean is of the unnormalised document embeddings (as in VPRF); scores at
non-candidate positions are 0. With ``beta = 0`` the query is unchanged and the ranking is
P0's.
"""

from __future__ import annotations

import numpy as np

from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.primitives.channels import mask_for
from embedding_ttc.programs.primitives.feedback import vprf_update
from embedding_ttc.programs.primitives.scores import top_k_indices
from embedding_ttc.programs.recipe import Recipe

ROCCHIO_K: int = 3
"""Default number of feedback documents (SoftCentroid's K = 3; a cell of the paper's grid)."""

ROCCHIO_BETA: float = 0.5
"""Default weight of the feedback mean (SoftCentroid's alpha = 0.5; a cell of the grid)."""


class Rocchio:
    """Rescore with each query interpolated toward the uniform mean of its top-K candidates.

    Attributes:
        name: ``"Rocchio"``; the catalog sets ``Rocchio:K=...,beta=...`` on a parametrised
            instance.
        K: number of feedback documents.
        beta: weight of the feedback mean against the query.

    """

    name = "Rocchio"
    recipe = Recipe()

    def __init__(self, K: int = ROCCHIO_K, beta: float = ROCCHIO_BETA) -> None:
        """Check and store the parameters.

        Args:
            K: number of feedback documents, an integer ``>= 1``.
            beta: feedback weight in ``[0, 1]``.

        Raises:
            ValueError: on a parameter out of range.

        """
        if isinstance(K, bool) or int(K) != K or K < 1:
            raise ValueError(f"K must be an integer >= 1, got {K!r}")
        if not 0.0 <= beta <= 1.0:
            raise ValueError(f"beta must lie in [0, 1], got {beta!r}")
        self.K = int(K)
        self.beta = float(beta)

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """Return ``S' = Q' Dᵀ`` for the VPRF queries ``Q'`` (0 at non-candidates)."""
        mask = mask_for(ctx, S)
        moved = vprf_update(Q, D, top_k_indices(S, self.K, mask), self.beta)
        out: Matrix = (moved @ np.asarray(D, dtype=np.float32).T).astype(np.float32)
        if mask is not None:
            out[~mask] = 0.0
        return out
