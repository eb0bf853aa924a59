"""The query-time API of a deployed program: rerank a caller's shortlist, or search.

``Reranker.load(DIR)`` opens an index (:mod:`embedding_ttc.deploy.index`) and the encoder it
names (wrapped in the on-disk cache). A query is encoded once under ``retrieval.query``; the
program then runs over the query and its candidates, exactly as in an evaluation shortlist
batch, with a Context whose ``encode_fn`` is served from the index
(:class:`~embedding_ttc.deploy.store.StoreEncodeFn`): no stored document is re-encoded.

What a batch of queries means (the recipe's ``batch`` kind, :mod:`embedding_ttc.programs.recipe`):
a query's scores never depend on the other queries of a call. Programs whose scores depend
only on the query and its candidates run a batch as one program call (columns: the union of
the candidates, each query masked to its own); the others run one call per query, with the
index's reference query sample appended for programs with per-document statistics over the
queries (BidirZScore's column z-scores). :meth:`Reranker.score` with ``joint=True`` instead
runs the given queries as one program call, as the evaluation does (for parity checks).

A program deployed from a program file (``index build --program-file``) runs from the source
stored in the index, in the search's sandbox, one contained process per program call
(:mod:`embedding_ttc.deploy.program_file` says why); its batch kind was measured at build time.
A failure of such a call (a crash, a timeout) raises
:class:`~embedding_ttc.evaluation.outcome.CandidateError` with its status and reason.

Documents the index does not hold (:meth:`Reranker.rerank_texts`, a caller whose first stage
is another system): each is given as its text, and its index-time work (its
``retrieval.passage`` row of ``D``, the program's document-side encodes) is computed live by
the recording pass ``index build`` runs (:func:`~embedding_ttc.deploy.recording.record_encodes`),
through the encoder (its on-disk cache, when it has one, so a repeated document is not
re-encoded); it is then scored in the same program call as the documents the index holds.

An index of a lexical library program holds its documents' text analyses (tokens, bigrams,
sentence and paragraph spans; one folder per segment); each program call is handed those of
its columns (:class:`~embedding_ttc.programs.primitives.text_analysis.ColumnAnalyses`,
``ctx.deployed.text_analyses``), a document given as a text the index does not hold being
analysed live.
A program's index-time embeddings of its columns (their sentences, pairs and paragraphs, the
documents under another view) are gathered by stored row
(:class:`~embedding_ttc.deploy.chunk_rows.ColumnEmbeddings`, ``ctx.deployed.stored_embeddings``),
no chunk text being cut and no text looked up.

Rankings: best first; ties broken as trec_eval breaks them (descending document id), as in
:class:`~embedding_ttc.evaluation.ranking.TaskRanker`; a ranking of texts breaks ties by
position in the request (earlier first). Calls are serialised by a lock: the
encoders' tokenizers are not thread-safe.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.deploy.chunk_rows import ColumnEmbeddings
from embedding_ttc.deploy.doc_table import text_hash
from embedding_ttc.deploy.errors import CandidateRequestError
from embedding_ttc.deploy.first_stage import FIRST_STAGES, FirstStage
from embedding_ttc.deploy.first_stage import bm25 as bm25_first_stage
from embedding_ttc.deploy.first_stage import dense as dense_first_stage
from embedding_ttc.deploy.index import Index, RowTexts
from embedding_ttc.deploy.recording import record_encodes
from embedding_ttc.deploy.store import StoreBuilder, StoreEncodeFn
from embedding_ttc.deploy.text_documents import (
    RankedText,
    TextDocument,
    TextInput,
    TextRanking,
    text_documents,
)
from embedding_ttc.encoders.base import PASSAGE, QUERY, Embeddings, Encoder
from embedding_ttc.evaluation.batches import SHORTLIST_BATCH
from embedding_ttc.evaluation.evaluate import check_output, encode_texts
from embedding_ttc.evaluation.metrics import descending_id_rank, top_k
from embedding_ttc.programs.base import Context, DeployedInputs, Program, TextAnalysisSource
from embedding_ttc.programs.primitives.text_analysis import ColumnAnalyses
from embedding_ttc.programs.recipe import Recipe

Ranking = list[tuple[str, float]]
"""``(document id, score)`` pairs, best first."""

DEFAULT_SHORTLIST = 100


@dataclass
class CallStats:
    """Where one call's time and encoder work went.

    Attributes:
        queries: live queries scored.
        query_encodes: query texts encoded for the queries' own embeddings.
        program_encodes: texts the program sent to the live encoder (query-time encodes).
        live_calls: encoder calls, both kinds.
        store_texts: texts the program's ``encode_fn`` served from the index.
        index_misses: document-side texts the index lacked (encoded live; 0 normally).
        live_documents: documents given as texts that the index does not hold, whose
            index-time work was computed live (:meth:`Reranker.rerank_texts`).
        live_document_encodes: texts encoded for them (their ``D`` rows and the program's
            index-time encodes; an encoder cache may have served some of them).
        live_document_seconds: seconds computing their index-time work (the recording pass).
        program_calls: program invocations.
        first_stage_seconds: query encoding plus the first stage (search only).
        encode_seconds: seconds in the live encoder (query embeddings and program encodes).
        program_seconds: seconds inside the program, its live encodes included.
        program_encode_seconds: the part of ``program_seconds`` spent in the live encoder.

    """

    queries: int = 0
    query_encodes: int = 0
    program_encodes: int = 0
    live_calls: int = 0
    store_texts: int = 0
    index_misses: int = 0
    live_documents: int = 0
    live_document_encodes: int = 0
    live_document_seconds: float = 0.0
    program_calls: int = 0
    first_stage_seconds: float = 0.0
    encode_seconds: float = 0.0
    program_seconds: float = 0.0
    program_encode_seconds: float = 0.0

    @property
    def algebra_seconds(self) -> float:
        """Seconds in the program outside the encoder (its matrix algebra and text work)."""
        return max(self.program_seconds - self.program_encode_seconds, 0.0)


@dataclass(frozen=True)
class Scored:
    """Every candidate's score, per query.

    Attributes:
        candidates: per query, its candidates as index rows (ascending).
        scores: per query, the program's score of each candidate (aligned).
        stats: what the call cost.

    """

    candidates: list[NDArray[np.intp]]
    scores: list[NDArray[np.float32]]
    stats: CallStats = field(default_factory=CallStats)


@dataclass(frozen=True)
class TextScored:
    """Every given document's score for one query, in the order given.

    Attributes:
        documents: the documents, as given.
        scores: the program's score of each (aligned).
        held: whether the index held each (same id and text; a bare text: same text).
        stats: what the call cost (``live_documents``: how many were computed live).

    """

    documents: list[TextDocument]
    scores: NDArray[np.float32]
    held: NDArray[np.bool_]
    stats: CallStats

    @property
    def live(self) -> int:
        """Documents whose index-time work was computed live."""
        return int((~self.held).sum())


@dataclass(frozen=True)
class _Columns:
    """What one program call ranks: ``D`` rows, texts and ids of its columns."""

    D: Embeddings
    texts: Sequence[str]  # read on first use (RowTexts)
    ids: tuple[str, ...]
    held: NDArray[np.intp]  # the index rows of the leading columns
    live: tuple[str, ...] = ()  # then the texts of documents the index does not hold
    recorded: StoreBuilder | None = None  # index-time work of live documents
    analyses: TextAnalysisSource | None = None  # the columns' text analyses, if the index has them


def _check_k(k: int, name: str = "k") -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"{name} must be a positive integer, got {k!r}")
    return int(k)


class Reranker:
    """A deployed program over an index, with its encoder (thread-safe; calls serialised).

    Attributes:
        index: the loaded index.
        encoder: the live encoder (the index's; checked).
        program: the program (:meth:`Index.load_program`: the library's, or the stored
            source of a program file, run in the sandbox).
        recipe: its deployment recipe.

    """

    def __init__(self, index: Index, encoder: Encoder) -> None:
        program = index.load_program()
        index.check_encoder(encoder.info)
        self.index = index
        self.encoder = encoder
        self.program: Program = program
        self.recipe: Recipe = index.recipe
        # id -> row: at a million documents about 100 MB of dict entries (the id strings
        # themselves are the index's, shared).
        self._row = {doc_id: i for i, doc_id in enumerate(index.doc_ids)}
        self._tiebreak = descending_id_rank(index.doc_ids)
        # Text hashes, sorted, with their rows (16 bytes a document): built on the first call
        # with texts; a bare text is found by its hash and confirmed by reading the row.
        self._hash_order: tuple[NDArray[np.uint64], NDArray[np.intp]] | None = None
        self._lock = threading.RLock()

    @classmethod
    def load(
        cls,
        directory: Path | str,
        *,
        encoder: Encoder | None = None,
        verify: bool = False,
        cache_dir: Path | str | None = None,
    ) -> Reranker:
        """Open the index at ``directory`` with ``encoder`` (default: the one it names, cached).

        Raises:
            EncoderMismatchError: ``encoder`` is not the one the index was built with.
            ProgramVersionError: the installed program is another version than the index's.
            IndexCorruptError: a stored program source does not match its sha256.
            DeployError: no index there, or a corrupted one (the message names the file).

        """
        index = Index.load(directory, verify=verify)
        return cls(index, encoder if encoder is not None else index.default_encoder(cache_dir))

    def __repr__(self) -> str:
        return f"Reranker({self.index!r})"

    # --- the public calls ------------------------------------------------------------------

    def rerank(self, query: str, candidate_ids: Sequence[str], k: int = 10) -> Ranking:
        """The best ``k`` of ``candidate_ids`` for ``query`` under the program."""
        return self.rerank_batch([query], [candidate_ids], k)[0]

    def rerank_batch(
        self, queries: Sequence[str], candidate_lists: Sequence[Sequence[str]], k: int = 10
    ) -> list[Ranking]:
        """:meth:`rerank` for several queries (each query's result as if it came alone)."""
        k = _check_k(k)
        return self.top(self.score(queries, candidate_lists), k)

    def rerank_texts(self, query: str, documents: Sequence[TextInput], k: int = 10) -> TextRanking:
        """The best ``k`` of ``documents``, given by their texts, for ``query``.

        Documents the index does not hold are scored too (:meth:`score_texts` says how);
        the result says how many there were. Ties: earlier position first.
        """
        k = _check_k(k)
        scored = self.score_texts(query, documents)
        best = top_k(scored.scores, np.arange(len(scored.documents)), k)
        ranked = [RankedText(int(p), scored.documents[p].id, float(scored.scores[p])) for p in best]
        return TextRanking(ranked, scored.live)

    def score_texts(self, query: str, documents: Sequence[TextInput]) -> TextScored:
        """Score documents given by their texts, held by the index or not, in one program call.

        Args:
            query: the query text.
            documents: each a string, or ``{"text": str, "id"?: str, "title"?: str}`` (title
                and text joined as the index joins them). Ids, when given, are distinct.

        A document the index holds keeps its stored index-time work: a record whose id the
        index holds with the same text (title and text joined), or a bare text equal to an
        indexed document's (stored work depends on the text alone). Any other document,
        including a known id given with a changed text (the text given is scored, never the
        stored one), has its index-time work computed live by the build's recording pass, once
        per distinct text. Scores of held documents are the :meth:`score` scores of the same
        candidates; a live document's score is the one it would get had it been built into
        the index (for programs with statistics over the candidates, such as BM25's IDF: over
        the candidates of this call, held and live alike, as they would be were all of them
        indexed).

        Raises:
            CandidateRequestError: an empty list, a malformed document, an empty text, or an id
                given twice.
            DeployError: the program failed in the recording pass of the live documents.

        """
        queries = self._check_queries([query])
        docs = text_documents(documents)
        with self._lock:
            rows = self._held(docs)
            stats = CallStats()
            Q = self._encode(queries, stats)
            columns, order = self._text_columns(query, docs, rows, stats)
            reference = self.recipe.batch == "reference"
            values = self._call(Q, queries, columns, None, reference, stats)[0]
        scores = np.empty(len(docs), dtype=np.float32)
        scores[order] = values
        return TextScored(docs, scores, rows >= 0, stats)

    def search(
        self,
        query: str,
        k: int = 10,
        first_stage: FirstStage = "dense",
        shortlist: int = DEFAULT_SHORTLIST,
    ) -> Ranking:
        """The best ``k`` documents: the first stage's top ``max(shortlist, k)``, reranked."""
        return self.search_batch([query], k, first_stage, shortlist)[0]

    def search_batch(
        self,
        queries: Sequence[str],
        k: int = 10,
        first_stage: FirstStage = "dense",
        shortlist: int = DEFAULT_SHORTLIST,
    ) -> list[Ranking]:
        """:meth:`search` for several queries."""
        return self.top(self.search_scores(queries, k, first_stage, shortlist), _check_k(k))

    def search_scores(
        self,
        queries: Sequence[str],
        k: int = 10,
        first_stage: FirstStage = "dense",
        shortlist: int = DEFAULT_SHORTLIST,
    ) -> Scored:
        """First stage then :meth:`score`: every shortlisted candidate's score, with stats."""
        n = max(_check_k(shortlist, "shortlist"), _check_k(k))
        queries = self._check_queries(queries)
        with self._lock:
            stats = CallStats()
            start = time.perf_counter()
            Q = self._encode(queries, stats)
            lists = [np.sort(c) for c in self._first_stage(queries, Q, n, first_stage)]
            stats.first_stage_seconds = time.perf_counter() - start
            return self._score(queries, lists, Q, stats, joint=False)

    def first_stage(
        self, queries: Sequence[str], n: int = DEFAULT_SHORTLIST, kind: FirstStage = "dense"
    ) -> list[list[str]]:
        """Each query's best ``n`` document ids (best first) under the built-in first stage."""
        n = _check_k(n, "n")
        queries = self._check_queries(queries)
        with self._lock:
            lists = self._first_stage(queries, self._encode(queries, CallStats()), n, kind)
        return [[self.index.doc_ids[int(j)] for j in rows] for rows in lists]

    def score(
        self,
        queries: Sequence[str],
        candidate_lists: Sequence[Sequence[str]],
        *,
        joint: bool = False,
    ) -> Scored:
        """Score every candidate of every query (one query's scores as if it came alone).

        Args:
            queries: the query texts.
            candidate_lists: per query, the document ids it ranks (no duplicates).
            joint: run all the queries as one program call over the union of their
                candidates, as an evaluation shortlist batch does: batch statistics are then
                taken over these queries, and no reference sample is appended.

        Raises:
            CandidateRequestError: an empty list, an unknown id, or an id given twice.

        """
        queries = self._check_queries(queries)
        if isinstance(candidate_lists, str) or len(candidate_lists) != len(queries):
            raise ValueError("give one candidate list per query")
        lists = [self._rows(ids, q) for q, ids in enumerate(candidate_lists)]
        with self._lock:
            stats = CallStats()
            Q = self._encode(queries, stats)
            return self._score(queries, lists, Q, stats, joint=joint)

    def top(self, scored: Scored, k: int) -> list[Ranking]:
        """The best ``k`` of each query's scored candidates (ties: descending document id)."""
        out = []
        for cand, values in zip(scored.candidates, scored.scores, strict=True):
            pos = top_k(values, self._tiebreak[cand], k)
            out.append([(self.index.doc_ids[int(cand[p])], float(values[p])) for p in pos])
        return out

    # --- internals -------------------------------------------------------------------------

    @staticmethod
    def _check_queries(queries: Sequence[str]) -> list[str]:
        if isinstance(queries, str):
            raise TypeError("queries must be a sequence of strings, not a single string")
        out = list(queries)
        for q in out:
            if not isinstance(q, str):
                raise TypeError(f"a query must be a string, got {type(q).__name__}")
        return out

    def _rows(self, ids: Sequence[str], query: int) -> NDArray[np.intp]:
        if isinstance(ids, str):
            raise TypeError("candidate ids must be a sequence of strings, not a single string")
        if len(ids) == 0:
            raise CandidateRequestError("the candidate list is empty", query=query)
        rows = np.empty(len(ids), dtype=np.intp)
        for i, doc_id in enumerate(ids):
            row = self._row.get(doc_id) if isinstance(doc_id, str) else None
            if row is None:
                raise CandidateRequestError(
                    f"unknown candidate id {doc_id!r} (not in the index)", query=query, position=i
                )
            rows[i] = row
        ordered = np.sort(rows)
        dup = np.flatnonzero(ordered[1:] == ordered[:-1])
        if dup.size:
            doc_id = self.index.doc_ids[int(ordered[dup[0]])]
            position = list(ids).index(doc_id, list(ids).index(doc_id) + 1)
            raise CandidateRequestError(
                f"candidate id {doc_id!r} is given twice", query=query, position=position
            )
        return ordered

    def _held(self, docs: Sequence[TextDocument]) -> NDArray[np.intp]:
        """Each document's index row if the index holds it (same id and text), else -1.

        A bare text is the first row (in index order) holding that text.
        """
        rows = np.full(len(docs), -1, dtype=np.intp)
        for p, doc in enumerate(docs):
            if doc.id is None:
                rows[p] = self._row_of_text(doc.text)
                continue
            row = self._row.get(doc.id)
            if row is not None and self.index.document(row).joined == doc.text:
                rows[p] = row
        return rows

    def _row_of_text(self, text: str) -> int:
        if self._hash_order is None:
            hashes = np.concatenate([s.table.hashes for s in self.index.segments])
            order = np.argsort(hashes, kind="stable").astype(np.intp)  # equal hashes: row order
            self._hash_order = (hashes[order], order)
        hashes, order = self._hash_order
        h = np.uint64(text_hash(text))
        lo, hi = np.searchsorted(hashes, h, "left"), np.searchsorted(hashes, h, "right")
        for row in order[lo:hi]:
            if self.index.document(int(row)).joined == text:
                return int(row)
        return -1

    def _text_columns(
        self, query: str, docs: Sequence[TextDocument], rows: NDArray[np.intp], stats: CallStats
    ) -> tuple[_Columns, NDArray[np.intp]]:
        """The columns of a call over texts, and the document of each column.

        Held documents come first in ascending row order (so a call of held documents only
        has the columns of :meth:`score`'s call over their ids), then the live ones.
        """
        held = np.flatnonzero(rows >= 0)
        held = held[np.argsort(rows[held], kind="stable")]
        live = np.flatnonzero(rows < 0)
        D = np.empty((len(docs), self.index.manifest.encoder.dim), dtype=np.float32)
        D[: held.size] = self.index.vectors(rows[held])
        recorded = None
        texts = list(dict.fromkeys(docs[int(p)].text for p in live))
        if texts:
            embeddings, recorded = self._compute_live(query, texts, stats)
            where = {t: i for i, t in enumerate(texts)}
            D[held.size :] = embeddings[[where[docs[int(p)].text] for p in live]]
        live_texts = tuple(docs[int(p)].text for p in live)
        columns = _Columns(
            D,
            RowTexts(self.index, rows[held], live_texts),
            tuple(self.index.doc_ids[int(j)] for j in rows[held])
            + tuple(f"live-{int(p)}" for p in live),
            rows[held],
            live_texts,
            recorded,
            self._analyses(rows[held], live_texts),
        )
        return columns, np.concatenate([held, live])

    def _analyses(
        self, rows: NDArray[np.intp], live_texts: Sequence[str] = ()
    ) -> ColumnAnalyses | None:
        """The text analyses of columns: index ``rows``, then ``live_texts`` (analysed live)."""
        stored = self.index.analyses
        return None if stored is None else ColumnAnalyses(stored, rows, live_texts)

    def _compute_live(
        self, query: str, texts: list[str], stats: CallStats
    ) -> tuple[Embeddings, StoreBuilder]:
        """The index-time work of documents the index lacks, as ``index build`` computes it.

        Their ``D`` rows, then the build's recording pass over them (with this query as its
        sample query), against the index's store: encodes the store already holds are served
        from it, and a cached encoder serves texts it has seen before.
        """
        start = time.perf_counter()
        D = encode_texts(self.encoder, texts, PASSAGE)
        rec = record_encodes(self.program, self.encoder, texts, D, [query], self.index.store, None)
        stats.live_documents += len(texts)
        stats.live_document_encodes += len(texts) + rec.index_encodes
        stats.live_document_seconds += time.perf_counter() - start
        return D, rec.recorded

    def _encode(self, queries: list[str], stats: CallStats) -> Embeddings:
        start = time.perf_counter()
        Q = self.encoder.encode(queries, view=QUERY) if queries else self._empty()
        stats.encode_seconds += time.perf_counter() - start
        stats.queries += len(queries)
        stats.query_encodes += len(queries)
        stats.live_calls += 1 if queries else 0
        return np.asarray(Q, dtype=np.float32)

    def _empty(self) -> Embeddings:
        return np.zeros((0, self.index.manifest.encoder.dim), dtype=np.float32)

    def _first_stage(
        self, queries: list[str], Q: Embeddings, n: int, kind: FirstStage
    ) -> list[NDArray[np.intp]]:
        index = self.index
        if kind in ("dense", "exact"):
            return dense_first_stage(
                index.segments, index.starts, Q, n, self._tiebreak, exact=kind == "exact"
            )
        if kind == "bm25":
            return bm25_first_stage(index.segments, index.starts, queries, n, self._tiebreak)
        raise ValueError(f"unknown first stage {kind!r}; choose from {', '.join(FIRST_STAGES)}")

    def _score(
        self,
        queries: list[str],
        lists: list[NDArray[np.intp]],
        Q: Embeddings,
        stats: CallStats,
        *,
        joint: bool,
    ) -> Scored:
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
        return Scored(lists, scores, stats)

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
        columns = _Columns(
            self.index.vectors(cols),
            RowTexts(self.index, cols),
            tuple(self.index.doc_ids[int(j)] for j in cols),
            cols,
            analyses=self._analyses(cols),
        )
        values = self._call(Q, texts, columns, local, reference, stats)
        if local is None:
            return [values[i].copy() for i in range(len(lists))]
        return [values[i, c] for i, c in enumerate(local)]

    def _call(
        self,
        Q: Embeddings,
        texts: list[str],
        columns: _Columns,
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
