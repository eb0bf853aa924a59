"""*GraphCentrality*: a graph-central positive anchor and the hardest negative.

Paper App. "Frontier Program Descriptions", *GraphCentrality* (c = 12.2): "Within the
top-quarter of the current ranking, pairwise document-document similarities identify the most
central document as the positive anchor. The negative anchor is the bottom-half document
closest to the top-quarter centroid, representing the hardest negative."

It builds on *MomentumProg* (:mod:`~embedding_ttc.programs.library.momentum_prog`); the new
rounds join the earlier ones in the cross-round RRF (Cormack et al. 2009). Choices where the
paper is silent:

* "the current ranking" is the cross-round RRF of every *MomentumProg* round; centrality and
  hardness are those of :func:`~embedding_ttc.programs.primitives.anchors.central_anchor`
  (mean cosine to the other top-quarter documents) and
  :func:`~embedding_ttc.programs.primitives.anchors.hardest_negative`;
* "expansions": both anchors are expanded like *NegContrastive*'s (query + best-matching
  sentence, under ``retrieval.query``), giving two rounds: the positive expansion, and the
  contrast ``normalize(q_pos - q_neg)``;
* both rounds have the cosine and sentence MaxSim channels and pass the adaptive gate
  (:mod:`~embedding_ttc.programs.library.expansion`) against the current ranking.

Cost: *MomentumProg*'s, plus 2 query-time encodes per query.
"""

from __future__ import annotations

from embedding_ttc.encoders.base import QUERY
from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.library.expansion import Pipeline, contrast, expansion_recipe
from embedding_ttc.programs.library.momentum_prog import run_momentum_prog
from embedding_ttc.programs.primitives.anchors import central_anchor, hardest_negative


def add_graph_rounds(p: Pipeline) -> None:
    """Append the gated central-anchor round and the central-versus-hardest contrast round.

    Args:
        p: a pipeline holding at least *MomentumProg*'s rounds.

    """
    current = p.fused()
    central = p.anchors(lambda row, cand: [central_anchor(p.D, current[row], cand)])
    hardest = p.anchors(lambda row, cand: [hardest_negative(p.D, current[row], cand)])
    q_pos = p.expand(central, QUERY)
    q_neg = p.expand(hardest, QUERY)
    p.add_gated("central-context", p.query_channels(q_pos), current)
    p.add_gated("central-contrast", p.query_channels(contrast(q_pos, q_neg)), current)


def run_graph_centrality(p: Pipeline) -> None:
    """The whole program's stages: *MomentumProg*'s, then the graph rounds."""
    run_momentum_prog(p)
    add_graph_rounds(p)


class GraphCentrality:
    """Central and hardest-negative anchors expanded, on top of MomentumProg."""

    name = "GraphCentrality"
    # 3: script-aware tokens and sentences (unicode tokenizer; Thai, zero-width splits)
    # 2: duplicate documents tie as equally central (central_anchor's _TIE_EPS)
    version = 3
    recipe = expansion_recipe(10, 6, "MomentumProg's + two anchor expansions")

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """Return the cross-round RRF of every round."""
        p = Pipeline(Q, D, S, ctx)
        run_graph_centrality(p)
        return p.fused()
