"""BidirZScore (paper App. "BidirZScore", c = 1.2): the query scored against documents-as-queries.

Every document is re-encoded with the query-side view ``retrieval.query`` (index-time work,
``|D|`` encodes), giving ``S_rev = Q D_qᵀ``, in which each document is scored "as if it were a
query" against the original query embeddings. The output is the sum of the per-column
z-scores of ``S`` and ``S_rev``: for each document, how many standard deviations above its own
mean over the queries a given query scores. Standardising per column removes a document's
global popularity (a "hub" that is close to every query) before the rows are ranked.

Choices where the paper is silent:

* the column statistics (mean, population std) are taken over every query of the batch,
  candidates or not: a document's "per-document mean" is its mean cosine to the queries, a
  measure of how much of a hub it is, and a query that does not rank it still measures that.
  Outputs at non-candidate positions are 0, as the mask convention asks. In a reranking task
  whose pools are disjoint (BIRCO), taking the statistics over candidates only would leave
  each document one query, no spread, and every z-score 0 (ΔnDCG@10 of -0.40 on
  birco_arguana with MiniLM); in shortlist mode the queries are those of the shortlist batch,
  and a deployed query is scored with the index's reference sample, which ranks every column;
* the two matrices count equally (a plain sum of z-scores);
* the documents are re-encoded even when the encoder's views collapse. ``S_rev`` then equals
  ``S`` up to rounding and the program reduces to ``2 * zscore_cols(S)``, which still
  reorders the rows; the cost stays ``|D|`` so that the cost ratio does not depend on the
  encoder.
"""

from __future__ import annotations

import numpy as np

from embedding_ttc.encoders.base import QUERY
from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.primitives.channels import encode_documents, mask_for
from embedding_ttc.programs.primitives.scores import Mask, Scores, zscore_cols
from embedding_ttc.programs.recipe import Artifact, Recipe


def reversed_documents(ctx: Context) -> Matrix:
    """The documents encoded under the query view ``retrieval.query`` (index-time work)."""
    return encode_documents(ctx, QUERY)


def bidirectional_scores(S: Matrix, S_rev: Matrix, mask: Mask | None) -> Scores:
    """``zscore_cols(S) + zscore_cols(S_rev)``, column statistics over every row.

    ``S`` and ``S_rev`` must be finite everywhere (they are ``Q Dᵀ`` and ``Q D_qᵀ``, not
    masked score matrices); the output is 0 at non-candidate positions.
    """
    out: Scores = zscore_cols(S) + zscore_cols(S_rev)
    if mask is not None:
        out = np.where(mask, out, np.float32(0.0)).astype(np.float32)
    return out


class BidirZScore:
    """Sum of the per-column z-scores of ``S`` and of ``Q`` against query-view documents."""

    name = "BidirZScore"
    version = 2  # 2: BidirZScore's column statistics over every query, not candidates only
    recipe = Recipe(artifacts=(Artifact("document", QUERY),), batch="reference")

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """Return ``zscore_cols(S) + zscore_cols(Q D_qᵀ)``, 0 off each query's candidates."""
        mask = mask_for(ctx, S)
        return bidirectional_scores(S, Q @ reversed_documents(ctx).T, mask)
