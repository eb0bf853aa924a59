"""*SoftCentroid*, the minimal centroid-replacement pseudo-relevance feedback program.

Paper §4.4 and App. "Comparison with Classical Rocchio and PRF Baselines".

Each query is moved toward the softmax-weighted centroid of its top-K candidates and the
documents are rescored with the moved query:

    c_i  = normalize(sum_{j in topK(i)} softmax_j(S_ij / tau) d_j)
    q'_i = normalize((1 - alpha) q_i + alpha c_i),      S'_ij = q'_i · d_j

with the paper's universal defaults K = 3, alpha = 0.5, tau = 0.05
(:func:`~embedding_ttc.programs.primitives.feedback.soft_centroid_query`, which documents our
reading of "centroid replacement"). It is pseudo-relevance feedback in the line of Rocchio
(1971) and the dense VPRF of Li et al. (2023); unlike their uniform mean, the weights follow
the cosine scores through a sharp softmax. No encoder call: c = 1.

Choices where the paper is silent: the top K are each query's best candidates by ``S`` (ties
by column index); scores at non-candidate positions are 0.
"""

from __future__ import annotations

import numpy as np

from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.primitives.channels import mask_for
from embedding_ttc.programs.primitives.feedback import (
    SOFT_CENTROID_ALPHA,
    SOFT_CENTROID_K,
    SOFT_CENTROID_TAU,
    soft_centroid_query,
)
from embedding_ttc.programs.recipe import Recipe


class SoftCentroid:
    """Rescore with each query moved toward the softmax centroid of its top-K candidates.

    Attributes:
        name: ``"SoftCentroid"`` (the catalog renames a parametrised instance).
        K: number of feedback documents.
        alpha: weight of the centroid against the query.
        tau: softmax temperature over cosine scores.

    """

    name = "SoftCentroid"
    recipe = Recipe()

    def __init__(
        self,
        K: int = SOFT_CENTROID_K,
        alpha: float = SOFT_CENTROID_ALPHA,
        tau: float = SOFT_CENTROID_TAU,
    ) -> None:
        """Check and store the parameters.

        Args:
            K: number of feedback documents, an integer ``>= 1``.
            alpha: centroid weight in ``[0, 1]``.
            tau: softmax temperature, ``> 0``.

        Raises:
            ValueError: on a parameter out of range.

        """
        if isinstance(K, bool) or int(K) != K or K < 1:
            raise ValueError(f"K must be an integer >= 1, got {K!r}")
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"alpha must lie in [0, 1], got {alpha!r}")
        if not tau > 0.0:
            raise ValueError(f"tau must be > 0, got {tau!r}")
        self.K = int(K)
        self.alpha = float(alpha)
        self.tau = float(tau)

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """Return ``S' = Q' Dᵀ`` for the SoftCentroid queries ``Q'`` (0 at non-candidates)."""
        mask = mask_for(ctx, S)
        moved = soft_centroid_query(Q, D, S, k=self.K, tau=self.tau, alpha=self.alpha, mask=mask)
        out: Matrix = (moved @ np.asarray(D, dtype=np.float32).T).astype(np.float32)
        if mask is not None:
            out[~mask] = 0.0
        return out
