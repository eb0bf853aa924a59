"""AdaptGranularity (paper App. "AdaptGranularity", c = 2.7): the better of two granularities.

Documents are split into paragraphs and into sentences, each granularity encoded in its own
batch as index-time work. Each produces a MaxSim channel (ColBERT MaxSim, Khattab & Zaharia
2020, at chunk level); both are z-scored per query over its candidates and the adaptive
selector keeps, per query and document, the element-wise maximum: a document is as good as
its more convincing granularity, measured in standard deviations of that granularity's own
score distribution.

Choices where the paper is silent: paragraphs are blank-line blocks, else lines, else windows
of :data:`~embedding_ttc.programs.primitives.chunking.PARAGRAPH_SENTENCES` sentences
(:func:`~embedding_ttc.programs.primitives.chunking.split_paragraphs`); chunks are encoded
under ``retrieval.passage``, at most
:data:`~embedding_ttc.programs.primitives.chunking.MAX_CHUNKS_PER_DOC` per document; the
z-score is per row (per query) with population std over the query's candidates; a row with
no spread z-scores to 0. Non-candidates score 0.
"""

from __future__ import annotations

import numpy as np

from embedding_ttc.encoders.base import PASSAGE
from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.primitives.channels import encode_granularity, mask_for, maxsim_scores
from embedding_ttc.programs.primitives.scores import zscore_rows
from embedding_ttc.programs.recipe import Artifact, Recipe


class AdaptGranularity:
    """Element-wise maximum of the row-z-scored paragraph and sentence MaxSim channels."""

    name = "AdaptGranularity"
    # 2: script-aware sentences (Thai spaces and zero-width spaces split)
    version = 2
    recipe = Recipe(artifacts=(Artifact("paragraph", PASSAGE), Artifact("sentence", PASSAGE)))

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """Return ``max(z(MaxSim_paragraph), z(MaxSim_sentence))`` per query and document."""
        mask = mask_for(ctx, S)
        paragraphs = zscore_rows(maxsim_scores(Q, encode_granularity(ctx, "paragraph"), mask), mask)
        sentences = zscore_rows(maxsim_scores(Q, encode_granularity(ctx, "sentence"), mask), mask)
        return np.maximum(paragraphs, sentences)
