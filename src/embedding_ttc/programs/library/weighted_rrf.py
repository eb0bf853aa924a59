"""*WeightedRRF*: reciprocal rank fusion of the cosine and BM25 rankings, one weight each.

``w / (k + rank_S) + (1 - w) / (k + rank_BM25)`` (Qdrant's weighted RRF), ranks over each
query's candidates with ties at their average rank, ``k = 60`` as in
:data:`~embedding_ttc.programs.primitives.scores.RRF_K`. At ``w = 0.5`` it ranks exactly as
BM25DenseRRF, whose sum is twice this one. ``w`` weighs the dense channel. No encoder call:
c = 1.

**Default: the grid's best on discovery.** ``wrrf-grid`` (``w`` in 0.1 … 0.9) was evaluated on
the ten discovery tasks with all-MiniLM-L6-v2 (``results/fusion-grid``); the default is the cell
with the highest mean ΔnDCG@10 over those tasks, ``w = 0.1`` (+0.1817), at the grid's
BM25-heavy edge. No held-out task was looked at.
"""

from __future__ import annotations

import numpy as np

from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.library.hybrid_evidence import ranked_bm25
from embedding_ttc.programs.primitives.channels import mask_for
from embedding_ttc.programs.primitives.scores import RRF_K, ranks
from embedding_ttc.programs.recipe import Recipe

WRRF_W: float = 0.1
"""The default dense weight: the weighted-RRF grid's best on discovery."""


class WeightedRRF:
    """Reciprocal rank fusion of the cosine and BM25 rankings with a weight per channel.

    Attributes:
        name: ``"WeightedRRF"``; parametrised as ``WeightedRRF:w=...``.
        w: the weight of the dense channel, in ``[0, 1]`` (BM25 has ``1 - w``).
        k: the rank offset.

    """

    name = "WeightedRRF"
    recipe = Recipe(lexical=True, batch="candidates")

    def __init__(self, w: float = WRRF_W, k: int = RRF_K) -> None:
        """Check and store the parameters.

        Raises:
            ValueError: a ``w`` outside ``[0, 1]`` or a negative ``k``.

        """
        if not 0.0 <= float(w) <= 1.0:
            raise ValueError(f"w must lie in [0, 1], got {w!r}")
        if isinstance(k, bool) or int(k) != k or k < 0:
            raise ValueError(f"k must be an integer >= 0, got {k!r}")
        self.w = float(w)
        self.k = int(k)

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """Return ``w / (k + rank_S) + (1 - w) / (k + rank_BM25)`` (0 at non-candidates)."""
        mask = mask_for(ctx, S)
        dense = 1.0 / (self.k + ranks(S, mask, "average").astype(np.float64))
        lexical = 1.0 / (self.k + ranks(ranked_bm25(ctx), mask, "average").astype(np.float64))
        return (self.w * dense + (1.0 - self.w) * lexical).astype(np.float32)
