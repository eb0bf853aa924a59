"""LexicalHybridRRF (paper App. "LexicalHybridRRF", c = 3.9): sparse-dense hybrid through RRF.

Two lexical channels that need no encoder call, BM25-style IDF-weighted word overlap (Okapi
BM25, Robertson et al. 1995) and word-bigram overlap, are fused with the embedding channels by
reciprocal rank fusion (Cormack, Clarke & Buettcher 2009), ``RRF(d) = sum_i 1 / (k +
rank_i(d))``, ranks taken over each query's candidates.

Choices where the paper is silent:

* the embedding channels are those inherited from the cheaper frontier programs, which is
  what makes the cost 3.9: CoverageTriple's eight (debiased MaxSim and TopMeanSim at three
  granularities, topic, full document) and BidirZScore's bidirectional channel; see
  :mod:`embedding_ttc.programs.library.lexical_channels`;
* the fusion is a flat RRF over the eleven channels, each counting once;
* ``k`` = 60, the value of Cormack et al., not the ``k`` = 0 the paper prints (see
  :data:`~embedding_ttc.programs.primitives.scores.RRF_K` for why).
"""

from __future__ import annotations

from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.library.channels import mask_for
from embedding_ttc.programs.library.lexical_channels import HybridBackbone, hybrid_lexical
from embedding_ttc.programs.primitives.scores import rrf


class LexicalHybridRRF:
    """RRF of nine embedding channels, BM25 and word-bigram overlap."""

    name = "LexicalHybridRRF"

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """Return the RRF score of every candidate over the eleven channels."""
        mask = mask_for(ctx, S)
        embedding = HybridBackbone.build(D, ctx, mask).scores(Q, mask)
        return rrf([*embedding, *hybrid_lexical(ctx)], mask)
