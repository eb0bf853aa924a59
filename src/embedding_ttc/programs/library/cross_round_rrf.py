"""CrossRoundRRF (paper App. "CrossRoundRRF", c = 3.9): three rounds of refinement, fused by RRF.

The backbone is LexicalHybridRRF's (nine embedding channels, BM25, word-bigram overlap) plus
two more lexical channels, query-term coverage and rare-term IDF: thirteen channels.

* Round 1: RRF (Cormack, Clarke & Buettcher 2009) of the thirteen channels.
* Round 2: Rocchio (1971) in the embedding space,
  ``q' = normalize(q + mean(D_pos) - mean(D_neg))``, with ``D_pos`` / ``D_neg`` the
  candidates strictly above / below the query's median round-1 score; every embedding
  channel is recomputed with ``q'`` (no encoder call) and fused with the lexical channels.
* Round 3: the query residual ``q_res = q - proj(q, mean(D_pos))``, the part of the query
  orthogonal to the positive cluster, re-normalised and scored like round 2; when
  ``||q_res|| <`` :data:`RESIDUAL_MIN_NORM` the query keeps its round-1 scores.
* Final: ``RRF(R1, R2, R3)``, rewarding documents that rank well in every round.

Choices where the paper is silent: the centroids are plain means of the base document
embeddings ``D`` (the space ``q`` lives in), an empty side contributing the zero vector (a
constant round-1 row has no side, and Rocchio then leaves ``q`` as it is); the residual is
re-normalised before scoring, because the channels are cosines; the lexical channels, which
depend on the query text only, are the same in every round; ``k`` = 60 in every RRF (see
:data:`~embedding_ttc.programs.primitives.scores.RRF_K`). Rocchio and the residual use no
encoder call, so the cost is LexicalHybridRRF's.

Deployed, a query is scored with the index's reference queries appended
(``ctx.deployed.scored_rows``), for the bidirectional channel's column statistics. Round 1 runs for
every row, since the reference rows' refined queries enter those statistics in rounds 2 and 3;
rounds 2 and 3 then score the live rows alone, every channel but the bidirectional one being per
query, with the chunk channels in the live form of
:class:`~embedding_ttc.programs.library.coverage_channels.Centred` (as in LexicalHybridRRF).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.library.coverage_channels import unit_rows
from embedding_ttc.programs.library.hybrid_evidence import (
    HYBRID_ARTIFACTS,
    HybridBackbone,
    all_rows,
    crossround_lexical,
    live_rows,
)
from embedding_ttc.programs.primitives.channels import mask_for
from embedding_ttc.programs.primitives.feedback import query_residual, rocchio
from embedding_ttc.programs.primitives.scores import Mask, Scores, median_split, rrf
from embedding_ttc.programs.recipe import Recipe

RESIDUAL_MIN_NORM = 0.1
"""Below this norm the query residual is deemed empty and round 3 falls back to round 1
(the paper's threshold; the residual of a unit query is below it when the query is within
about 5.7 degrees of the positive centroid)."""


def side_means(D: Matrix, side: Mask) -> NDArray[np.float64]:
    """Per query, the mean embedding of the documents marked in ``side`` (zero if none)."""
    weights = side.astype(np.float64)
    counts = weights.sum(axis=1, keepdims=True)
    sums = weights @ np.asarray(D, dtype=np.float64)
    out: NDArray[np.float64] = np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)
    return out


class CrossRoundRRF:
    """RRF across an initial, a Rocchio and a query-residual round of multi-channel RRF."""

    name = "CrossRoundRRF"
    # 3: script-aware tokens and sentences (unicode tokenizer; Thai, zero-width splits)
    # 2: BidirZScore's column statistics over every query, not candidates only
    version = 3
    recipe = Recipe(artifacts=HYBRID_ARTIFACTS, lexical=True, batch="reference")

    def rounds(
        self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context
    ) -> tuple[Scores, Scores, Scores]:
        """The three rounds' fused scores ``(R1, R2, R3)``, for inspection and tests.

        With ``ctx.deployed.scored_rows`` (module docstring), the rounds of the leading rows only.
        """
        mask = mask_for(ctx, S)
        rows = live_rows(ctx, S.shape[0])
        backbone = HybridBackbone.build(D, ctx, mask, live=rows is not None)
        lexical = crossround_lexical(ctx)
        head = rows if rows is not None else S.shape[0]

        def fused(queries: Matrix) -> Scores:
            return rrf([*backbone.scores(queries, mask), *lexical], mask=mask)

        def fused_head(queries: Matrix) -> Scores:
            """``fused(queries)[:head]``: the bidirectional channel's statistics over all rows."""
            if rows is None:
                return fused(queries)
            return rrf([*backbone.scores(queries, None, rows), *(c[:rows] for c in lexical)])

        r1 = fused(Q)
        above, below = median_split(r1, mask)
        positive = side_means(D, above)
        r2 = fused_head(rocchio(Q, positive, side_means(D, below)))
        residual = query_residual(Q, positive)
        empty = np.linalg.norm(residual, axis=1, keepdims=True) < RESIDUAL_MIN_NORM
        r3 = fused_head(np.where(empty, Q, unit_rows(residual)))
        r3 = np.where(empty[:head], r1[:head], r3)
        return r1[:head], r2, r3.astype(np.float32)

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """Return ``RRF(R1, R2, R3)`` over each query's candidates."""
        # Scoring the leading rows only (ctx.deployed.scored_rows) needs no mask: live_rows says so.
        return all_rows(rrf(list(self.rounds(Q, D, S, ctx)), mask=mask_for(ctx, S)), S.shape[0])
