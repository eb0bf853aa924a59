"""*ConvexHybrid*: a convex combination of the normalised cosine and BM25 scores.

``alpha * norm(S) + (1 - alpha) * norm(BM25)``, each channel normalised over the query's
candidates, by z-score (:func:`~embedding_ttc.programs.primitives.scores.zscore_rows`) or by
min-max (:func:`~embedding_ttc.programs.primitives.scores.minmax_rows`: Elasticsearch's and
OpenSearch's linear retriever with its ``minmax`` normaliser). Bruch, Gai and Ingber ("An
Analysis of Fusion Functions for Hybrid Retrieval", TOIS 2023) find such convex combinations
ahead of reciprocal rank fusion once ``alpha`` is tuned on the target domain. ``alpha`` weighs
the dense channel; BM25 as in the ``BM25`` baseline. No encoder call: c = 1.

**Defaults: the grid's best on discovery.** ``convex-grid`` (``alpha`` in 0.1 … 0.9 under both
normalisers) was evaluated on the ten discovery tasks with all-MiniLM-L6-v2
(``results/fusion-grid``); the default normaliser and each normaliser's default ``alpha`` are
the cells with the highest mean ΔnDCG@10 over those tasks, the measure every program is
reported by. No held-out task was looked at. The z-score cell at ``alpha = 0.5`` is also the
best by the median over tasks.

Choices where the sources leave room: statistics are over each query's candidates only; a
channel whose candidates all score the same normalises to 0; non-candidates score 0.
"""

from __future__ import annotations

from typing import Literal, get_args

import numpy as np

from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.library.hybrid_evidence import ranked_bm25
from embedding_ttc.programs.primitives.channels import mask_for
from embedding_ttc.programs.primitives.scores import minmax_rows, zscore_rows
from embedding_ttc.programs.recipe import Recipe

Normaliser = Literal["zscore", "minmax"]
NORMALISERS: tuple[Normaliser, ...] = get_args(Normaliser)

CONVEX_NORM: Normaliser = "zscore"
"""The default normaliser: the convex grid's best cell on discovery is a z-score cell."""

CONVEX_ALPHA: dict[Normaliser, float] = {"zscore": 0.5, "minmax": 0.3}
"""The default ``alpha`` per normaliser, each its grid's best on discovery (mean Δ +0.2636 for
z-scores and +0.2433 for min-max, against BM25DenseRRF's +0.1067 and BM25's +0.2165)."""


class ConvexHybrid:
    """A convex combination of the normalised cosine and BM25 scores.

    Attributes:
        name: ``"ConvexHybrid"``; the catalog sets ``ConvexHybrid:alpha=...,norm=...`` on a
            parametrised instance.
        alpha: the weight of the dense channel, in ``[0, 1]``.
        norm: ``zscore`` or ``minmax``, applied per query over its candidates.

    """

    name = "ConvexHybrid"
    recipe = Recipe(lexical=True, batch="candidates")

    def __init__(self, alpha: float | None = None, norm: str = CONVEX_NORM) -> None:
        """Check and store the parameters.

        Args:
            alpha: the dense weight; ``None``: the normaliser's default (:data:`CONVEX_ALPHA`).
            norm: ``zscore`` or ``minmax``.

        Raises:
            ValueError: an ``alpha`` outside ``[0, 1]`` or an unknown normaliser.

        """
        if norm not in NORMALISERS:
            raise ValueError(f"norm must be one of {', '.join(NORMALISERS)}, got {norm!r}")
        if alpha is not None and not 0.0 <= float(alpha) <= 1.0:
            raise ValueError(f"alpha must lie in [0, 1], got {alpha!r}")
        self.norm: Normaliser = "minmax" if norm == "minmax" else "zscore"
        self.alpha = CONVEX_ALPHA[self.norm] if alpha is None else float(alpha)

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """Return ``alpha * norm(S) + (1 - alpha) * norm(BM25)`` over each query's candidates."""
        mask = mask_for(ctx, S)
        scale = minmax_rows if self.norm == "minmax" else zscore_rows
        dense = scale(S, mask).astype(np.float64)
        lexical = scale(ranked_bm25(ctx), mask).astype(np.float64)
        return (self.alpha * dense + (1.0 - self.alpha) * lexical).astype(np.float32)
