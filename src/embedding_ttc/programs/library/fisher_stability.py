"""*FisherStability*: multi-round contextual expansion with Fisher and rank-stability channels.

Paper App. "Frontier Program Descriptions", *FisherStability* (c = 14.7): "Introduces two
zero-cost algebraic scoring channels alongside multi-round contextual expansion. The Fisher
discriminant channel computes the direction that maximally separates top-quarter from
bottom-quarter documents, ``w_Fisher = normalize(mean(d_top) - mean(d_bot))``, and scores each
document as ``d_iᵀ w_Fisher``. [...] The rank-stability channel computes the variance of each
document's rank across all preceding scoring channels; low variance indicates robust
consensus. [...] The full pipeline aggregates 22 channels through RRF."

The Fisher channel is Fisher's (1936) linear discriminant with an isotropic within-class
scatter (:func:`~embedding_ttc.programs.primitives.feedback.fisher_direction`); everything is
fused by RRF (Cormack et al. 2009). It builds on *GraphCentrality*
(:mod:`~embedding_ttc.programs.library.graph_centrality`). Choices where the paper is silent:

* "multi-round contextual expansion": :data:`CONTEXT_SIZES` successive rounds, each expanding
  the query with the best-matching sentences of the top ``k`` candidates of the ranking fused
  so far (k = 2, then 3, re-fused in between, so the second round sees the first), under
  ``retrieval.query``, with the cosine and sentence MaxSim channels, behind the adaptive gate
  (:mod:`~embedding_ttc.programs.library.expansion`);
* the Fisher direction is computed per query from the top and bottom quarters of its
  candidates in the ranking fused after those rounds; a single candidate gives a zero
  direction (a constant channel);
* the stability channel is ``1 / (1 + var)`` of each candidate's rank over *every* channel of
  every earlier round, the Fisher channel included
  (:func:`~embedding_ttc.programs.primitives.feedback.rank_stability`), with tied scores
  sharing their average rank: a coarse channel (bigram overlap, where most documents score 0)
  would otherwise spread its ties by column order and add variance that only reflects the
  order of the corpus file. Low variance also
  marks documents that every channel puts near the bottom; as one round among many in the
  fusion this cannot lift them into the head, and it tips near-ties at the top toward the
  consistently ranked document;
* the output is the RRF of every round (each round counts once; the channel count is not the
  paper's 22): the backbone's three rounds (9 channels), *DiverseDualCtx*'s 2 (4),
  *ConsensusRocchio*'s 2 (4), *NegContrastive*'s 1 (2), *MomentumProg*'s 4 (8),
  *GraphCentrality*'s 2 (4), and here 2 expansion rounds (4), Fisher (1) and stability (1):
  18 rounds over 37 channels.

Cost: *GraphCentrality*'s, plus 2 query-time encodes per query; the two algebraic channels
cost nothing.
"""

from __future__ import annotations

from functools import partial

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.encoders.base import QUERY
from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.library.expansion import Pipeline, expansion_recipe
from embedding_ttc.programs.library.graph_centrality import run_graph_centrality
from embedding_ttc.programs.primitives.anchors import QUARTER, bottom_portion, top_portion
from embedding_ttc.programs.primitives.feedback import fisher_direction, rank_stability
from embedding_ttc.programs.primitives.scores import ranks, row_top_k

CONTEXT_SIZES: tuple[int, ...] = (2, 3)
"""Anchors per expansion round: the top 2, then the top 3 of the ranking fused so far.

One anchor is what the cheaper programs already expand with; two and three sentences widen
the context while keeping the expanded text within a small encoder's input length.
"""


def fisher_scores(p: Pipeline, ranking: Matrix) -> Matrix:
    """Per query, ``D · w`` for the Fisher direction of its top versus bottom quarter."""
    out = np.zeros((p.n_queries, p.n_docs), dtype=np.float32)
    for row in range(p.n_queries):
        cand = p.candidates(row)
        if cand.size == 0:
            continue
        top = top_portion(ranking[row], cand, QUARTER)
        bottom = bottom_portion(ranking[row], cand, QUARTER)
        out[row] = p.D @ fisher_direction(p.D, top, bottom)
    return out


def _top_k(ranking: Matrix, k: int, row: int, cand: NDArray[np.intp]) -> NDArray[np.intp]:
    return row_top_k(ranking[row], k, cand)


def add_fisher_stability_rounds(p: Pipeline) -> None:
    """Append the contextual expansion rounds, then the Fisher and rank-stability channels.

    Args:
        p: a pipeline holding at least *GraphCentrality*'s rounds.

    """
    for size in CONTEXT_SIZES:
        current = p.fused()
        queries = p.expand(p.anchors(partial(_top_k, current, size)), QUERY)
        p.add_gated(f"top{size}-context", p.query_channels(queries), current)
    p.add("fisher", (fisher_scores(p, p.fused()),))
    stability = rank_stability([ranks(c, p.mask, ties="average") for c in p.channels()])
    p.add("rank-stability", (stability,))


def run_fisher_stability(p: Pipeline) -> None:
    """The whole program's stages: *GraphCentrality*'s, then this program's."""
    run_graph_centrality(p)
    add_fisher_stability_rounds(p)


class FisherStability:
    """Multi-round expansion plus Fisher and rank-stability channels, on GraphCentrality."""

    name = "FisherStability"
    # 3: script-aware tokens and sentences (unicode tokenizer; Thai, zero-width splits)
    # 2: duplicate documents tie as equally central (central_anchor's _TIE_EPS)
    version = 3
    recipe = expansion_recipe(12, 8, "GraphCentrality's + two contextual expansion rounds")

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """Return the cross-round RRF of every round."""
        p = Pipeline(Q, D, S, ctx)
        run_fisher_stability(p)
        return p.fused()
