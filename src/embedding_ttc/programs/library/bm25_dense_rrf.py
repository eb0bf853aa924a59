"""BM25DenseRRF, the vanilla hybrid baseline: RRF of BM25 and the dense cosine ``S``.

``RRF(d) = 1 / (k + rank_BM25(d)) + 1 / (k + rank_S(d))`` with ``k`` = 60 (Cormack, Clarke &
Buettcher 2009; see :data:`~embedding_ttc.programs.primitives.scores.RRF_K`), ranks taken
over each query's candidates; BM25 as in the ``BM25`` baseline (Robertson et al. 1995). No
z-scoring, no granularity, no feedback and no encoder call: the reference point for what
LexicalHybridRRF adds on top of a plain sparse-dense hybrid.
"""

from __future__ import annotations

from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.library.hybrid_evidence import ranked_bm25
from embedding_ttc.programs.primitives.channels import mask_for
from embedding_ttc.programs.primitives.scores import rrf
from embedding_ttc.programs.recipe import Recipe


class BM25DenseRRF:
    """Reciprocal rank fusion of the BM25 and cosine rankings."""

    name = "BM25DenseRRF"
    # 2: script-aware tokens (unicode tokenizer: CJK/Thai bigrams, Arabic normalised)
    version = 2
    recipe = Recipe(lexical=True, batch="candidates")

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """Return ``rrf([BM25, S])`` over each query's candidates."""
        return rrf([ranked_bm25(ctx), S], mask=mask_for(ctx, S))
