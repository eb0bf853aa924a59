"""BM25, the lexical baseline: Okapi BM25 alone (Robertson et al. 1995), no encoder call.

Scores come from :class:`~embedding_ttc.programs.primitives.lexical.BM25` (``bm25s``, Lucene
variant, ``k1`` = 1.5, ``b`` = 0.75, our Unicode-aware tokenizer); ``Q``, ``D`` and ``S`` are
not used. IDF and average document length are taken over the documents the program is handed
(the corpus, or in shortlist mode the batch's union of shortlists), the usual corpus
statistics rather than per-query candidate statistics. Non-candidate scores are left as
computed (finite; the evaluator ranks candidates only).
"""

from __future__ import annotations

from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.library.hybrid_evidence import ranked_bm25
from embedding_ttc.programs.recipe import Recipe


class BM25Program:
    """Okapi BM25 over the raw texts (registered as ``BM25``)."""

    name = "BM25"
    # 2: script-aware tokens (unicode tokenizer: CJK/Thai bigrams, Arabic normalised)
    version = 2
    recipe = Recipe(lexical=True, batch="candidates")

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """Return the BM25 score of every query-document pair."""
        return ranked_bm25(ctx)
