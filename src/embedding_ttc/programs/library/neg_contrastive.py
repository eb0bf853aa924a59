"""*NegContrastive*: a contrastive query from a positive and a negative anchor expansion.

Paper App. "Frontier Program Descriptions", *NegContrastive* (c = 7.2): "Constructs a
contrastive query embedding by encoding the query concatenated with the best-matching sentence
of the bottom-ranked document, then subtracting the result from a positive-anchor expansion:
``q_contrast = normalize(q_pos - q_neg)``. This nonlinear contrastive signal captures
encoder-level interactions between query and context that linear Rocchio over corpus
centroids cannot represent."

It builds on *ConsensusRocchio* (:mod:`~embedding_ttc.programs.library.consensus_rocchio`);
the contrast round joins the earlier rounds in the cross-round RRF (Cormack et al. 2009).
Choices where the paper is silent:

* ``q_pos`` is *DiverseDualCtx*'s dominant-anchor expansion (query + best sentence of the
  preliminary ranking's top candidate), which the pipeline already holds: re-encoding the
  same kind of text would cost a second encode for little change;
* ``q_neg`` is the query + the best-matching sentence (by cosine to the query) of the
  bottom-ranked candidate of the current ranking, the cross-round RRF of every
  *ConsensusRocchio* round; encoded under ``retrieval.query``;
* when ``q_pos - q_neg`` vanishes (a single candidate) the round uses ``q_pos``;
* the contrast round has the cosine and sentence MaxSim channels and passes the adaptive gate
  (:mod:`~embedding_ttc.programs.library.expansion`) against the current ranking.

Cost: *ConsensusRocchio*'s, plus 1 query-time encode per query (``q_neg``).
"""

from __future__ import annotations

from embedding_ttc.encoders.base import QUERY
from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.library.consensus_rocchio import run_consensus_rocchio
from embedding_ttc.programs.library.diverse_dual_ctx import DOMINANT_EXPANSION
from embedding_ttc.programs.library.expansion import Pipeline, contrast, expansion_recipe
from embedding_ttc.programs.primitives.anchors import bottom_anchor


def add_neg_contrastive_round(p: Pipeline) -> None:
    """Append the gated contrast round ``normalize(q_pos - q_neg)``.

    Args:
        p: a pipeline holding at least *ConsensusRocchio*'s rounds.

    """
    current = p.fused()
    bottom = p.anchors(lambda row, cand: [bottom_anchor(current[row], cand)])
    q_neg = p.expand(bottom, QUERY)
    q_contrast = contrast(p.expansions[DOMINANT_EXPANSION], q_neg)
    p.add_gated("negative-contrast", p.query_channels(q_contrast), current)


def run_neg_contrastive(p: Pipeline) -> None:
    """The whole program's stages: *ConsensusRocchio*'s, then the contrast round."""
    run_consensus_rocchio(p)
    add_neg_contrastive_round(p)


class NegContrastive:
    """Contrast a positive-anchor and a bottom-anchor expansion, on top of ConsensusRocchio."""

    name = "NegContrastive"
    # 2: script-aware tokens and sentences (unicode tokenizer; Thai, zero-width splits)
    version = 2
    recipe = expansion_recipe(4, 3, "ConsensusRocchio's + a negative-anchor expansion")

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """Return the cross-round RRF of every round."""
        p = Pipeline(Q, D, S, ctx)
        run_neg_contrastive(p)
        return p.fused()
