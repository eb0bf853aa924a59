"""BidirZScore (paper App. "BidirZScore", c = 1.2): the query scored against documents-as-queries.

Every document is re-encoded with the query-side view ``retrieval.query`` (index-time work,
``|D|`` encodes), giving ``S_rev = Q D_qᵀ``, in which each document is scored "as if it were a
query" against the original query embeddings. The output is the sum of the per-column
z-scores of ``S`` and ``S_rev``: for each document, how many standard deviations above its own
mean over the queries a given query scores. Standardising per column removes a document's
global popularity (a "hub" that is close to every query) before the rows are ranked.

Choices where the paper is silent:

* the column statistics (mean, population std) are taken over the queries that have the
  document as a candidate (:func:`~embedding_ttc.programs.primitives.scores.zscore_cols`
  with the candidate mask), so a query that does not rank a document never moves its
  z-scores; in shortlist mode the queries are those of the batch;
* the two matrices count equally (a plain sum of z-scores);
* the documents are re-encoded even when the encoder's views collapse. ``S_rev`` then equals
  ``S`` up to rounding and the program reduces to ``2 * zscore_cols(S)``, which still
  reorders the rows; the cost stays ``|D|`` so that the cost ratio does not depend on the
  encoder.
"""

from __future__ import annotations

from embedding_ttc.encoders.base import QUERY
from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.library.channels import encode_documents, mask_for
from embedding_ttc.programs.primitives.scores import Mask, Scores, zscore_cols


def reversed_documents(ctx: Context) -> Matrix:
    """The documents encoded under the query view ``retrieval.query`` (index-time work)."""
    return encode_documents(ctx, QUERY)


def bidirectional_scores(S: Matrix, S_rev: Matrix, mask: Mask | None) -> Scores:
    """``zscore_cols(S) + zscore_cols(S_rev)``, column statistics over candidates."""
    out: Scores = zscore_cols(S, mask) + zscore_cols(S_rev, mask)
    return out


class BidirZScore:
    """Sum of the per-column z-scores of ``S`` and of ``Q`` against query-view documents."""

    name = "BidirZScore"

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """Return ``zscore_cols(S) + zscore_cols(Q D_qᵀ)`` over each query's candidates."""
        mask = mask_for(ctx, S)
        return bidirectional_scores(S, Q @ reversed_documents(ctx).T, mask)
