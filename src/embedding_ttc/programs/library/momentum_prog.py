"""*MomentumProg*: expansion anchors chosen by rank momentum, expanded under all four views.

Paper App. "Frontier Program Descriptions", *MomentumProg* (c = 9.8): "Selects expansion
anchors by score momentum rather than absolute rank. The positive anchor is the top-half
document whose rank improved most between the baseline and the first refinement round; the
negative anchor is the bottom-half document whose rank dropped most. Four expansion rounds
each use a different LoRA adapter: ``retrieval.query``, ``text-matching``, ``classification``,
and ``retrieval.passage``."

It builds on *NegContrastive* (:mod:`~embedding_ttc.programs.library.neg_contrastive`); the
four rounds join the earlier ones in the cross-round RRF (Cormack et al. 2009). Choices where
the paper is silent:

* the baseline is the cosine ranking ``S``; the first refinement round is the backbone's
  Rocchio round (*CrossRoundRRF*'s round 2, the first round that refines the query); the
  halves are those of the refined ranking
  (:func:`~embedding_ttc.programs.primitives.anchors.momentum_anchors`);
* every round expands the query with the positive anchor's best-matching sentence, encoded
  under its view; the negative anchor enters at no encoder cost, as Rocchio's (1971) negative
  term in the scoring space: the round's query is
  ``normalize(q_view - MOMENTUM_NEGATIVE_WEIGHT · d_neg)``;
* each round has the cosine and sentence MaxSim channels (documents and sentences are
  under ``retrieval.passage`` whatever the round's view) and passes the adaptive gate
  (:mod:`~embedding_ttc.programs.library.expansion`) against the fused ranking of every
  *NegContrastive* round;
* on an encoder whose views collapse the four texts would be encoded identically, so the
  expansion is encoded once and the four rounds share it (same output, a quarter the cost).

Cost: *NegContrastive*'s, plus 4 query-time encodes per query (1 when the views collapse).
"""

from __future__ import annotations

import numpy as np

from embedding_ttc.encoders.base import CLASSIFICATION, PASSAGE, QUERY, TEXT_MATCHING
from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.library.expansion import (
    ROCCHIO_ROUND,
    Pipeline,
    expansion_recipe,
    unit_rows,
)
from embedding_ttc.programs.library.neg_contrastive import run_neg_contrastive
from embedding_ttc.programs.primitives.anchors import momentum_anchors
from embedding_ttc.programs.primitives.scores import ranks

MOMENTUM_VIEWS: tuple[str, ...] = (QUERY, TEXT_MATCHING, CLASSIFICATION, PASSAGE)
"""The views of the four expansion rounds, in the paper's order."""

MOMENTUM_NEGATIVE_WEIGHT: float = 0.25
"""Weight of the negative anchor's embedding subtracted from each expanded query.

Below the expanded query's weight of 1, as Rocchio's negative weight is below the positive
one in the classic SMART settings (gamma < beta): the negative anchor is one document, a
noisier signal than the expansion it corrects. A global choice, never tuned per task.
"""


def add_momentum_rounds(p: Pipeline) -> None:
    """Append the four gated momentum expansion rounds, one per view.

    Args:
        p: a pipeline holding at least *NegContrastive*'s rounds.

    """
    current = p.fused()
    before = ranks(p.S, p.mask)
    after = ranks(p.round(ROCCHIO_ROUND).scores, p.mask)
    pairs = p.anchors(lambda row, cand: momentum_anchors(before[row], after[row], cand))
    positive = [pair[:1] for pair in pairs]
    negative = np.zeros((p.n_queries, p.D.shape[1]), dtype=np.float32)
    for row, pair in enumerate(pairs):
        if pair:
            negative[row] = p.D[pair[1]]
    expanded = p.expand_views(positive, MOMENTUM_VIEWS)
    for view in MOMENTUM_VIEWS:
        q_view = expanded[view]
        moved = unit_rows(q_view - MOMENTUM_NEGATIVE_WEIGHT * negative, q_view)
        p.add_gated(f"momentum-{view}", p.query_channels(moved), current)


def run_momentum_prog(p: Pipeline) -> None:
    """The whole program's stages: *NegContrastive*'s, then the momentum rounds."""
    run_neg_contrastive(p)
    add_momentum_rounds(p)


class MomentumProg:
    """Momentum-chosen anchors expanded under four views, on top of NegContrastive."""

    name = "MomentumProg"
    # 2: script-aware tokens and sentences (unicode tokenizer; Thai, zero-width splits)
    version = 2
    recipe = expansion_recipe(
        8, 4, "NegContrastive's + one momentum expansion per view (one if views collapse)"
    )

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """Return the cross-round RRF of every round."""
        p = Pipeline(Q, D, S, ctx)
        run_momentum_prog(p)
        return p.fused()
