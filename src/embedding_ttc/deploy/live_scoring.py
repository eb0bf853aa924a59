"""Live scoring: the deployed program run over index rows for the queries of a call.

A query is encoded once under ``retrieval.query``; the program then runs over the query and its
candidates, exactly as in an evaluation shortlist batch, with a Context whose ``encode_fn`` is
served from the index (:class:`~embedding_ttc.deploy.store.StoreEncodeFn`): no stored document
is re-encoded.

What a batch of queries means (the recipe's ``batch`` kind, :mod:`embedding_ttc.programs.recipe`):
a query's scores never depend on the other queries of a call. Programs whose scores depend
only on the query and its candidates run a batch as one program call (columns: the union of
the candidates, each query masked to its own); the others run one call per query, with the
index's reference query sample appended for programs with per-document statistics over the
queries (BidirZScore's column z-scores). ``joint=True`` instead runs the given queries as one
program call, as the evaluation does (for parity checks).

An index of a lexical library program holds its documents' text analyses (tokens, bigrams,
sentence and paragraph spans; one folder per segment); each program call is handed those of its
columns (:class:`~embedding_ttc.programs.primitives.text_analysis.ColumnAnalyses`,
``ctx.deployed.text_analyses``), a document given as a text the index does not hold being
analysed live. A program's index-time embeddings of its columns (their sentences, pairs and
paragraphs, the documents under another view) are gathered by stored row
(:class:`~embedding_ttc.deploy.chunk_rows.ColumnEmbeddings`,
``ctx.deployed.stored_embeddings``), no chunk text being cut and no text looked up.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.deploy.call_stats import CallStats
from embedding_ttc.deploy.chunk_rows import ColumnEmbeddings
from embedding_ttc.deploy.index import Index
from embedding_ttc.deploy.index_texts import RowTexts
from embedding_ttc.deploy.rerank_results import CandidateScores
from embedding_ttc.deploy.store import StoreBuilder, StoreEncodeFn
from embedding_ttc.encoders.base import QUERY, Embeddings, Encoder
from embedding_ttc.evaluation.batches import SHORTLIST_BATCH
from embedding_ttc.programs.base import Context, DeployedInputs, Program, TextAnalysisSource
from embedding_ttc.programs.output import check_output
from embedding_ttc.programs.primitives.text_analysis import ColumnAnalyses
from embedding_ttc.programs.recipe import Recipe


@dataclass(frozen=True)
class Columns:
    """What one program call ranks: ``D`` rows, texts and ids of its columns."""

    D: Embeddings
    texts: Sequence[str]  # read on first use (RowTexts)
    ids: tuple[str, ...]
    held: NDArray[np.intp]  # the index rows of the leading columns
    live: tuple[str, ...] = ()  # then the texts of documents the index does not hold
    recorded: StoreBuilder | None = None  # index-time work of live documents
    analyses: TextAnalysisSource | None = None  # the columns' text analyses, if the index has them


class LiveScorer:
    """Runs a program over an index's rows for live queries (not thread-safe: callers lock).

    Attributes:
        index: the loaded index.
        encoder: the live encoder.
        program: the program.
        recipe: its deployment recipe (its ``batch`` kind says how queries are grouped).

    """

    def __init__(self, index: Index, encoder: Encoder, program: Program, recipe: Recipe) -> None:
        self.index = index
        self.encoder = encoder
        self.program = program
        self.recipe = recipe

    def encode(self, queries: list[str], stats: CallStats) -> Embeddings:
        """The queries' embeddings under ``retrieval.query`` (counted in ``stats``)."""
        start = time.perf_counter()
        Q = self.encoder.encode(queries, view=QUERY) if queries else self._empty()
        stats.encode_seconds += time.perf_counter() - start
        stats.queries += len(queries)
        stats.query_encodes += len(queries)
        stats.live_calls += 1 if queries else 0
        return np.asarray(Q, dtype=np.float32)

    def _empty(self) -> Embeddings:
        return np.zeros((0, self.index.manifest.encoder.dim), dtype=np.float32)

    def analyses(
        self, rows: NDArray[np.intp], live_texts: Sequence[str] = ()
    ) -> ColumnAnalyses | None:
        """The text analyses of columns: index ``rows``, then ``live_texts`` (analysed live)."""
        stored = self.index.analyses
        return None if stored is None else ColumnAnalyses(stored, rows, live_texts)

    def score(
        self,
        queries: list[str],
        lists: list[NDArray[np.intp]],
        Q: Embeddings,
        stats: CallStats,
        *,
        joint: bool,
    ) -> CandidateScores:
        """Every candidate's score per query, in program calls the recipe's batch kind allows."""
        batch = self.recipe.batch
        if joint:
            groups = [list(range(len(queries)))] if queries else []
        elif batch == "independent":
            groups = [
                list(range(s, min(s + SHORTLIST_BATCH, len(queries))))
                for s in range(0, len(queries), SHORTLIST_BATCH)
            ]
        else:
            groups = [[i] for i in range(len(queries))]
        reference = not joint and batch == "reference"
        scores: list[NDArray[np.float32]] = [np.zeros(0, np.float32)] * len(queries)
        for group in groups:
            rows = self._call_rows(
                Q[group], [queries[i] for i in group], [lists[i] for i in group], reference, stats
            )
            for i, values in zip(group, rows, strict=True):
                scores[i] = values
        return CandidateScores(lists, scores, stats)

    def _call_rows(
        self,
        Q: Embeddings,
        texts: list[str],
        lists: list[NDArray[np.intp]],
        reference: bool,
        stats: CallStats,
    ) -> list[NDArray[np.float32]]:
        """One program call over index rows: the union of the queries' candidates."""
        cols = np.unique(np.concatenate(lists)) if len(lists) > 1 else lists[0]
        local = None
        if any(len(c) != len(cols) for c in lists):
            local = tuple(np.searchsorted(cols, c).astype(np.intp) for c in lists)
        columns = Columns(
            self.index.vectors(cols),
            RowTexts(self.index, cols),
            tuple(self.index.doc_ids[int(j)] for j in cols),
            cols,
            analyses=self.analyses(cols),
        )
        values = self.call(Q, texts, columns, local, reference, stats)
        if local is None:
            return [values[i].copy() for i in range(len(lists))]
        return [values[i, c] for i, c in enumerate(local)]

    def call(
        self,
        Q: Embeddings,
        texts: list[str],
        columns: Columns,
        local: tuple[NDArray[np.intp], ...] | None,
        reference: bool,
        stats: CallStats,
    ) -> NDArray[np.float32]:
        """One program call: these queries (plus the reference rows) over ``columns``.

        Returns the scores over every column, one row per live query first (then the
        reference rows, if any): callers take the rows and columns they need.
        """
        query_ids = [f"query-{i}" for i in range(len(texts))]
        ref = self.index.reference
        scored_rows = None
        if reference and ref is not None:
            scored_rows = len(texts)
            # The reference rows rank the same columns (``local`` is None: one live query).
            Q = np.vstack([Q, ref.embeddings])
            texts = [*texts, *ref.texts]
            query_ids += [f"reference-{i}" for i in range(len(ref.texts))]
        D = columns.D
        S = Q @ D.T
        enc = StoreEncodeFn(self.index.store, self.encoder, columns.recorded)
        ctx = Context(
            encode_fn=enc,
            query_texts=tuple(texts),
            doc_texts=columns.texts,
            query_ids=tuple(query_ids),
            doc_ids=columns.ids,
            candidates=local,
            views_collapsed=self.encoder.info.collapsed,
            index_time=enc.index_time,
            deployed=DeployedInputs(
                scored_rows=scored_rows,
                text_analyses=columns.analyses,
                stored_embeddings=ColumnEmbeddings(
                    self.index.chunks, columns.held, columns.live, enc
                ),
            ),
        )
        start = time.perf_counter()
        out = self.program(Q, D, S, ctx)
        stats.program_seconds += time.perf_counter() - start
        values = check_output(out, S.shape, self.program.name)
        stats.program_calls += 1
        stats.program_encodes += enc.stats.live_texts
        stats.live_calls += enc.stats.live_calls
        stats.store_texts += enc.stats.store_texts
        stats.index_misses += enc.stats.index_misses
        stats.encode_seconds += enc.stats.live_seconds
        stats.program_encode_seconds += enc.stats.live_seconds
        return values
