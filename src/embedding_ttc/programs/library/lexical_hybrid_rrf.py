"""LexicalHybridRRF (paper App. "LexicalHybridRRF", c = 3.9): sparse-dense hybrid through RRF.

Two lexical channels that need no encoder call, BM25-style IDF-weighted word overlap (Okapi
BM25, Robertson et al. 1995) and word-bigram overlap, are fused with the embedding channels by
reciprocal rank fusion (Cormack, Clarke & Buettcher 2009), ``RRF(d) = sum_i 1 / (k +
rank_i(d))``, ranks taken over each query's candidates.

Choices where the paper is silent:

* the embedding channels are those inherited from the cheaper frontier programs, which is
  what makes the cost 3.9: CoverageTriple's eight (debiased MaxSim and TopMeanSim at three
  granularities, topic, full document) and BidirZScore's bidirectional channel; see
  :mod:`embedding_ttc.programs.library.hybrid_evidence`;
* the fusion is a flat RRF over the eleven channels, each counting once;
* ``k`` = 60, the value of Cormack et al., not the ``k`` = 0 the paper prints (see
  :data:`~embedding_ttc.programs.primitives.scores.RRF_K` for why).

Deployed, a query is scored with the index's reference queries appended, for the bidirectional
channel's column statistics (``ctx.deployed.scored_rows``); every other channel is per query, so
they are computed for the live rows alone, the chunk channels in the live form of
:class:`~embedding_ttc.programs.library.coverage_channels.Centred` (float32 cosines about each
centroid, where the batch form centres every candidate chunk in float64 first).
"""

from __future__ import annotations

from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.library.hybrid_evidence import (
    HYBRID_ARTIFACTS,
    HybridBackbone,
    all_rows,
    head_context,
    hybrid_lexical,
    live_rows,
)
from embedding_ttc.programs.primitives.channels import mask_for
from embedding_ttc.programs.primitives.scores import rrf
from embedding_ttc.programs.recipe import Recipe


class LexicalHybridRRF:
    """RRF of nine embedding channels, BM25 and word-bigram overlap."""

    name = "LexicalHybridRRF"
    # 3: script-aware tokens and sentences (unicode tokenizer; Thai, zero-width splits)
    # 2: BidirZScore's column statistics over every query, not candidates only
    version = 3
    recipe = Recipe(artifacts=HYBRID_ARTIFACTS, lexical=True, batch="reference")

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """Return the RRF score of every candidate over the eleven channels."""
        mask = mask_for(ctx, S)
        rows = live_rows(ctx, S.shape[0])
        backbone = HybridBackbone.build(D, ctx, mask, live=rows is not None)
        if rows is None:
            return rrf([*backbone.scores(Q, mask), *hybrid_lexical(ctx)], mask=mask)
        live = rrf([*backbone.scores(Q, None, rows), *hybrid_lexical(head_context(ctx, rows))])
        return all_rows(live, S.shape[0])
