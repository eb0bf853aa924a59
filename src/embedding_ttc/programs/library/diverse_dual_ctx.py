"""*DiverseDualCtx*: contextual query expansion with a dominant and a diverse anchor.

Paper App. "Frontier Program Descriptions", *DiverseDualCtx* (c = 5.6): "Two anchor documents
are selected from the top-half of a preliminary ranking: the dominant anchor is the top-ranked
document, and the diverse anchor is the top-half document most dissimilar to the dominant
anchor by cosine distance. The query is concatenated with each anchor's best-matching sentence
and re-encoded under the ``retrieval.query`` adapter, producing two new multi-channel scoring
rounds. All rounds are fused through cross-round RRF with an adaptive gate."

It builds on *CrossRoundRRF*'s rounds, fused by reciprocal rank fusion (Cormack et al. 2009).
Choices where the paper is silent (see :mod:`~embedding_ttc.programs.library.expansion` for
the shared ones: backbone, anchor sentence, round channels, gate):

* the preliminary ranking is the cross-round RRF of the backbone's three rounds (cosine and
  lexical channels, Rocchio, query residual), the cheapest fused ranking that already has the
  feedback rounds in it;
* the anchors come from each query's candidates
  (:func:`~embedding_ttc.programs.primitives.anchors.dominant_anchor`,
  :func:`~embedding_ttc.programs.primitives.anchors.diverse_anchor`: with fewer than four
  candidates the top half is the dominant anchor alone and both expansions use it);
* both expansion rounds pass the adaptive gate against the preliminary ranking.

Cost: 2 query-time encodes per query under ``retrieval.query`` (the two expansions), plus the
backbone's index-time encodes (every document's sentences; the documents under
``retrieval.query`` unless the encoder's views collapse).
"""

from __future__ import annotations

from embedding_ttc.encoders.base import QUERY
from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.library.expansion import Pipeline, add_backbone, expansion_recipe
from embedding_ttc.programs.primitives.anchors import diverse_anchor, dominant_anchor

DOMINANT_EXPANSION = "dominant"
"""Key in :attr:`Pipeline.expansions` of the dominant-anchor expansion (reused downstream)."""


def add_diverse_dual_rounds(p: Pipeline) -> None:
    """Append the two gated expansion rounds: dominant anchor, then diverse anchor.

    Args:
        p: a pipeline holding at least the backbone's rounds.

    """
    prelim = p.fused()
    dominant = p.anchors(lambda row, cand: [dominant_anchor(prelim[row], cand)])
    diverse = p.anchors(
        lambda row, cand: [diverse_anchor(p.D, prelim[row], cand, dominant[row][0])]
    )
    q_dominant = p.expand(dominant, QUERY)
    q_diverse = p.expand(diverse, QUERY)
    p.expansions[DOMINANT_EXPANSION] = q_dominant
    p.add_gated("dominant-context", p.query_channels(q_dominant), prelim)
    p.add_gated("diverse-context", p.query_channels(q_diverse), prelim)


def run_diverse_dual_ctx(p: Pipeline) -> None:
    """The whole program's stages: backbone, then the two expansions."""
    add_backbone(p)
    add_diverse_dual_rounds(p)


class DiverseDualCtx:
    """Expand each query with sentences of a dominant and a diverse anchor; fuse all rounds."""

    name = "DiverseDualCtx"
    # 2: script-aware tokens and sentences (unicode tokenizer; Thai, zero-width splits)
    version = 2
    recipe = expansion_recipe(
        2,
        2,
        "2 expansions (query + best sentences of anchor documents, chosen from the query's "
        "ranking)",
    )

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """Return the cross-round RRF of the backbone and the two expansion rounds."""
        p = Pipeline(Q, D, S, ctx)
        run_diverse_dual_ctx(p)
        return p.fused()
