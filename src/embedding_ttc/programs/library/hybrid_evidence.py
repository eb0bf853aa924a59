"""The evidence the hybrid RRF programs fuse: encoder-free lexical channels, embedding backbone.

The lexical channels (no encoder call) of LexicalHybridRRF (paper App. "LexicalHybridRRF"):
BM25-style IDF-weighted word overlap (Okapi BM25, Robertson et al. 1995, through
:class:`~embedding_ttc.programs.primitives.lexical.BM25`) and word-bigram overlap; and the two
that CrossRoundRRF (App. "CrossRoundRRF") adds: query-term coverage ratio and rare-term IDF.
Document statistics (IDF, average length) are taken over the documents some query ranks: the
union of the queries' candidates on a pool task, otherwise every document the program is handed
(``ctx.doc_texts``: the corpus, or in shortlist mode the batch's union of shortlists). So a
document no query ranks cannot move any score; its columns score 0. The channels read the
documents' text analyses (tokens, counts, bigrams:
:mod:`~embedding_ttc.programs.primitives.text_analysis`), the context's when a deployed index
hands them over, else computed once per text; their values are those of the text versions in
:mod:`~embedding_ttc.programs.primitives.lexical`, bit for bit
(:mod:`~embedding_ttc.programs.primitives.lexical_analysed`).

:class:`HybridBackbone` holds the embedding channels both programs fuse. The paper gives
LexicalHybridRRF a cost of c = 3.9 although its lexical channels cost nothing: it inherits
the channels of the cheaper frontier programs. We take CoverageTriple's eight channels
(c = 3.7) and BidirZScore's bidirectional channel (+|D| encodes, 0.2 on the paper's suite:
3.7 + 0.2 = 3.9); SentMaxSim's and AdaptGranularity's MaxSim channels are among
CoverageTriple's. The cosine ``S`` enters through CoverageTriple's full-document channel
(``S`` about the corpus centroid) and through the bidirectional channel. The backbone scores
any query matrix without encoding, so CrossRoundRRF re-scores its refined queries for free.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.programs.base import Context, DeployedInputs, Matrix
from embedding_ttc.programs.library.bidir_zscore import (
    BidirZScore,
    bidirectional_scores,
    reversed_documents,
)
from embedding_ttc.programs.library.coverage_channels import COVERAGE_ARTIFACTS, CoverageChannels
from embedding_ttc.programs.primitives.lexical_analysed import (
    bigram_overlap_analysed,
    query_term_coverage_analysed,
    rare_term_idf_analysed,
)
from embedding_ttc.programs.primitives.scores import Mask, Scores
from embedding_ttc.programs.primitives.text_analysis import TextAnalyses, analyses_of
from embedding_ttc.programs.recipe import Artifact
from embedding_ttc.programs.text.bm25 import bm25_analysed


def ranked_columns(ctx: Context) -> NDArray[np.intp]:
    """The documents some query ranks: the union of the candidates, else every document."""
    if ctx.candidates is None:
        return np.arange(len(ctx.doc_texts), dtype=np.intp)
    parts = [np.asarray(c, dtype=np.intp) for c in ctx.candidates]
    return np.unique(np.concatenate(parts)) if parts else np.empty(0, dtype=np.intp)


LexicalChannel = Callable[[Sequence[str], TextAnalyses], Scores]
"""A lexical channel over analysed documents: ``channel(query_texts, analyses)``."""


def _over_ranked(ctx: Context, channels: Sequence[LexicalChannel]) -> list[Scores]:
    """Each ``channel(queries, analyses)`` over the ranked documents, 0 in the other columns."""
    cols = ranked_columns(ctx)
    analyses = analyses_of(ctx)
    if cols.size == len(ctx.doc_texts):
        return [c(ctx.query_texts, analyses).astype(np.float32, copy=False) for c in channels]
    ranked = analyses.take(cols) if cols.size else analyses
    out = []
    for channel in channels:
        scores = np.zeros((len(ctx.query_texts), len(ctx.doc_texts)), dtype=np.float32)
        if cols.size:
            scores[:, cols] = channel(ctx.query_texts, ranked)
        out.append(scores)
    return out


def live_rows(ctx: Context, n_rows: int) -> int | None:
    """How many leading rows need scores (``ctx.deployed.scored_rows``), when fewer than ``n_rows``.

    ``None`` (score every row) unless the context marks trailing reference rows and every row
    ranks every column: only then are the live rows' channels, other than the batch-statistic
    ones, independent of the reference rows.
    """
    rows = DeployedInputs.of(ctx).scored_rows
    if rows is None or rows >= n_rows or ctx.candidates is not None:
        return None
    return rows


def all_rows(live: Scores, n_rows: int) -> Scores:
    """The leading rows' scores as the call's output: ``n_rows`` rows, the rest 0.

    The reference rows behind the live ones (:func:`live_rows`) are not scored; the caller
    uses only the leading rows. Scores of every row already are returned as they are.
    """
    if live.shape[0] == n_rows:
        return live
    out = np.zeros((n_rows, *live.shape[1:]), dtype=live.dtype)
    out[: live.shape[0]] = live
    return out


def head_context(ctx: Context, rows: int) -> Context:
    """``ctx`` restricted to its first ``rows`` queries (same documents)."""
    return replace(
        ctx,
        query_texts=tuple(ctx.query_texts[:rows]),
        query_ids=tuple(ctx.query_ids[:rows]),
        deployed=None if ctx.deployed is None else replace(ctx.deployed, scored_rows=None),
    )


def ranked_bm25(ctx: Context) -> Scores:
    """Okapi BM25 of every query against the ranked documents (no encoder call).

    Unlike :func:`~embedding_ttc.programs.primitives.channels.bm25_scores`, whose statistics
    are over every document of the call, the IDF and average length here are the ranked
    documents' (:func:`ranked_columns`); both score through
    :mod:`~embedding_ttc.programs.text.bm25`.
    """
    return _over_ranked(ctx, [bm25_analysed])[0]


def hybrid_lexical(ctx: Context) -> list[Scores]:
    """LexicalHybridRRF's two lexical channels: BM25 and word-bigram overlap."""
    return _over_ranked(ctx, [bm25_analysed, bigram_overlap_analysed])


def crossround_lexical(ctx: Context) -> list[Scores]:
    """CrossRoundRRF's four: BM25, bigram overlap, query-term coverage, rare-term IDF."""
    return _over_ranked(
        ctx,
        [
            bm25_analysed,
            bigram_overlap_analysed,
            query_term_coverage_analysed,
            rare_term_idf_analysed,
        ],
    )


HYBRID_ARTIFACTS: tuple[Artifact, ...] = (*COVERAGE_ARTIFACTS, *BidirZScore.recipe.artifacts)
"""The index-time encodes of :meth:`HybridBackbone.build`: CoverageTriple's, then BidirZScore's."""


@dataclass(frozen=True)
class HybridBackbone:
    """The document side of the hybrid programs' nine embedding channels.

    Attributes:
        coverage: CoverageTriple's eight channels (index-time encodes).
        documents: the base document embeddings ``D``.
        reversed_documents: the documents under ``retrieval.query`` (BidirZScore).

    """

    coverage: CoverageChannels
    documents: Matrix
    reversed_documents: Matrix

    @classmethod
    def build(
        cls, D: Matrix, ctx: Context, mask: Mask | None, *, live: bool = False
    ) -> HybridBackbone:
        """Encode every document-side channel once (index-time work).

        ``live``: for a query scored alone with reference rows (``ctx.deployed.scored_rows``), the
        chunk channels in :class:`~.coverage_channels.Centred`'s live form.
        """
        coverage = CoverageChannels.build(D, ctx, mask, live=live)
        return cls(coverage, D, reversed_documents(ctx))

    def scores(self, Q: Matrix, mask: Mask | None, rows: int | None = None) -> list[Scores]:
        """The nine embedding channels for queries ``Q`` (``Q Dᵀ`` is ``S`` for the base ``Q``).

        With ``rows``, only the first ``rows`` queries are scored (``mask`` must then be
        ``None``); the bidirectional channel still takes its column statistics over every row.
        """
        bidir = bidirectional_scores(Q @ self.documents.T, Q @ self.reversed_documents.T, mask)
        if rows is None:
            return [*self.coverage.scores(Q, mask), bidir]
        if mask is not None:
            raise ValueError("scoring the leading rows only needs every row to rank every column")
        return [*self.coverage.scores(Q[:rows], None), bidir[:rows]]
