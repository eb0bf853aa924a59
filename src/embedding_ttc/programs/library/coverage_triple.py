"""CoverageTriple (paper App. "CoverageTriple", c = 3.7): three granularities, eight channels.

Documents are decomposed into sentences, consecutive sentence pairs and paragraphs; each
granularity gives a MaxSim channel (ColBERT MaxSim, Khattab & Zaharia 2020: the strongest
local match) and a TopMeanSim channel (the mean similarity of a document's chunks above the
query's median chunk similarity). A topic channel (documents re-encoded at 128 tokens) and the
full-document channel (``D``) complete the eight channels, built by
:class:`~embedding_ttc.programs.library.coverage_channels.CoverageChannels`. Every channel is
debiased by its own embedding centroid; the reading, and why, is in that module's docstring.

Choices where the paper is silent:

* fusion: each channel is z-scored per query over its candidates and the eight z-scores are
  summed with equal weights. RRF enters the frontier only with LexicalHybridRRF, the next
  program; CoverageTriple's predecessor (AdaptGranularity) fuses z-scored channels, and a
  sum of z-scores keeps how far ahead a document is in each channel, which rank fusion
  discards;
* all encodes use ``retrieval.passage`` and are index-time work (chunks capped at
  :data:`~embedding_ttc.programs.primitives.chunking.MAX_CHUNKS_PER_DOC` per document);
* "128-token truncation" is the encoder's ``max_length=128``.
"""

from __future__ import annotations

import numpy as np

from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.library.coverage_channels import COVERAGE_ARTIFACTS, CoverageChannels
from embedding_ttc.programs.primitives.channels import mask_for
from embedding_ttc.programs.primitives.scores import zscore_rows
from embedding_ttc.programs.recipe import Recipe


class CoverageTriple:
    """Sum of the row-z-scored, centroid-debiased CoverageTriple channels."""

    name = "CoverageTriple"
    # 2: script-aware sentences (Thai spaces and zero-width spaces split)
    version = 2
    recipe = Recipe(artifacts=COVERAGE_ARTIFACTS, batch="candidates")

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """Return the sum over the eight channels of their per-query z-scores."""
        mask = mask_for(ctx, S)
        channels = CoverageChannels.build(D, ctx, mask).scores(Q, mask)
        total = np.zeros(S.shape, dtype=np.float32)
        for channel in channels:
            total += zscore_rows(channel, mask)
        return total
