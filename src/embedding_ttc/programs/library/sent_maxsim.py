"""SentMaxSim (paper App. "SentMaxSim", c = 2.2): a document scores as its best sentence.

Every document is split into sentences
(:func:`~embedding_ttc.programs.primitives.chunking.split_sentences`), the sentences are
encoded in one batch as index-time work, and each document is scored by the maximum cosine
between the query and any of its sentences: ColBERT's MaxSim operator (Khattab & Zaharia
2020) at sentence rather than token granularity, over single-vector sentence embeddings.

Choices where the paper is silent: the sentences are encoded under ``retrieval.passage``
(they are pieces of documents); at most
:data:`~embedding_ttc.programs.primitives.chunking.MAX_CHUNKS_PER_DOC` sentences per
document, the first ones, to bound the cost on book-length documents; a document without
sentence boundaries is one sentence; the MaxSim scores are returned as they are (no fusion
with ``S``), 0 at non-candidates.
"""

from __future__ import annotations

from embedding_ttc.encoders.base import PASSAGE
from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.primitives.channels import encode_granularity, mask_for, maxsim_scores
from embedding_ttc.programs.recipe import Artifact, Recipe


class SentMaxSim:
    """Sentence-level MaxSim: each document's best sentence cosine with the query."""

    name = "SentMaxSim"
    # 2: script-aware sentences (Thai spaces and zero-width spaces split)
    version = 2
    recipe = Recipe(artifacts=(Artifact("sentence", PASSAGE),))

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """Return the sentence MaxSim matrix over each query's candidates."""
        return maxsim_scores(Q, encode_granularity(ctx, "sentence"), mask_for(ctx, S))
