"""The query-time API of a deployed program: rerank a caller's shortlist, or search.

``Reranker.load(DIR)`` opens an index (:mod:`embedding_ttc.deploy.index`) and the encoder it
names (wrapped in the on-disk cache). Each query is encoded once, and the program runs over the
query and its candidates as in an evaluation shortlist batch
(:mod:`~embedding_ttc.deploy.live_scoring` says how, and what a batch of queries means: a
query's scores never depend on the other queries of a call). :meth:`Reranker.score` with
``joint=True`` instead runs the given queries as one program call, as the evaluation does (for
parity checks). Documents the index does not hold are scored from their texts
(:meth:`Reranker.rerank_texts`, :mod:`~embedding_ttc.deploy.caller_texts`). What the calls
return: :mod:`~embedding_ttc.deploy.rerank_results`, with their
:class:`~embedding_ttc.deploy.call_stats.CallStats`.

A program deployed from a program file (``index build --program-file``) runs from the source
stored in the index, in the search's sandbox (:mod:`embedding_ttc.deploy.program_file` says
why), loaded once into a warm contained child that each call messages
(:mod:`~embedding_ttc.program_files.sandbox.warm`; a failed call replaces the child); its batch
kind was measured at build time.
A failure of such a call (a crash, a timeout) raises
:class:`~embedding_ttc.programs.outcome.CandidateError` with its status and reason.

Rankings: best first; ties broken as trec_eval breaks them (descending document id), as in
:class:`~embedding_ttc.evaluation.ranking.TaskRanker`; a ranking of texts breaks ties by
position in the request (earlier first). Calls are serialised by a lock: the
encoders' tokenizers are not thread-safe.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.deploy.call_stats import CallStats
from embedding_ttc.deploy.caller_texts import CallerTexts
from embedding_ttc.deploy.errors import CandidateRequestError
from embedding_ttc.deploy.first_stage import FIRST_STAGES, FirstStage
from embedding_ttc.deploy.first_stage import bm25 as bm25_first_stage
from embedding_ttc.deploy.first_stage import dense as dense_first_stage
from embedding_ttc.deploy.index import Index
from embedding_ttc.deploy.live_scoring import LiveScorer
from embedding_ttc.deploy.rerank_results import CandidateScores, Ranking, TextScored
from embedding_ttc.deploy.text_documents import (
    RankedText,
    TextDocument,
    TextInput,
    TextRanking,
    text_documents,
)
from embedding_ttc.encoders.base import QUERY, Embeddings, Encoder
from embedding_ttc.encoders.threads import set_torch_threads
from embedding_ttc.evaluation.metrics import descending_id_rank, top_k
from embedding_ttc.program_files.sandbox.limits import SandboxLimits
from embedding_ttc.program_files.sandbox.warm import warm
from embedding_ttc.programs.base import Program
from embedding_ttc.programs.recipe import Recipe

REQUEST_LIMITS = SandboxLimits(wall_seconds=600.0)
"""The sandbox's limits of one request to a served program file: ten minutes, its encodes
included, as a request had before they were counted (an evaluation's default hour is a
task's, not a request's); the other limits are the evaluation's."""

DEFAULT_SHORTLIST = 100
"""Candidates ``/search`` hands the program (``serve --shortlist``)."""


def uncached(encoder: Encoder) -> Encoder:
    """The encoder under any cache or meter wrapping it: the one that runs the model."""
    from embedding_ttc.encoders.cache import CachedEncoder
    from embedding_ttc.encoders.meter import MeteredEncoder

    while isinstance(encoder, CachedEncoder | MeteredEncoder):
        encoder = encoder.inner
    return encoder


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
        # A program file: one warm child per reranker, each call under the request limits.
        program = warm(index.load_program(REQUEST_LIMITS))
        index.check_encoder(encoder.info)
        self.index = index
        self.recipe: Recipe = index.recipe
        self._scorer = LiveScorer(index, encoder, program, self.recipe)
        # id -> row: at a million documents about 100 MB of dict entries (the id strings
        # themselves are the index's, shared).
        self._row = {doc_id: i for i, doc_id in enumerate(index.doc_ids)}
        self._tiebreak = descending_id_rank(index.doc_ids)
        self._texts = CallerTexts(index, self._row, self._scorer)
        self._lock = threading.RLock()
        self.ready = False

    @property
    def encoder(self) -> Encoder:
        """The live encoder (the index's; checked)."""
        return self._scorer.encoder

    @property
    def program(self) -> Program:
        """The program the calls run (settable, e.g. to wrap it and observe its calls)."""
        return self._scorer.program

    @program.setter
    def program(self, program: Program) -> None:
        self._scorer.program = program

    @classmethod
    def load(
        cls,
        directory: Path | str,
        *,
        encoder: Encoder | None = None,
        verify: bool = False,
        cache_dir: Path | str | None = None,
        threads: int | None = None,
    ) -> Reranker:
        """Open the index at ``directory`` with ``encoder`` (default: the one it names, cached).

        ``threads`` limits torch's intra-op threads of this process, as ``serve --threads``
        does (``None``: torch's default; one is what a server of single queries wants).

        Raises:
            EncoderMismatchError: ``encoder`` is not the one the index was built with.
            ProgramVersionError: the installed program is another version than the index's.
            IndexCorruptError: a stored program source does not match its sha256.
            DeployError: no index there, or a corrupted one (the message names the file).

        """
        if threads is not None:
            if threads < 1:
                raise ValueError(f"threads must be at least 1, got {threads}")
            set_torch_threads(threads)
        index = Index.load(directory, verify=verify)
        return cls(index, encoder if encoder is not None else index.default_encoder(cache_dir))

    def warm_up(
        self, first_stage: FirstStage = "dense", shortlist: int = DEFAULT_SHORTLIST
    ) -> float:
        """Run the encoder itself, then one query end to end; then mark the reranker ready.

        The query is the start of the first document's text, so every part a real query
        touches is loaded before the first caller waits on it. It is first encoded by the
        encoder under any cache (:func:`uncached`): after a restart the cache already holds
        the warm-up text, and a warm-up answered from it would leave the model unloaded for
        the first real request (measured at 7.6 s). The search then runs the program on a
        real shortlist of ``shortlist`` candidates. Returns the seconds it took.
        """
        started = time.perf_counter()
        with self._lock:
            first = self.index.texts([0])[0] if len(self.index.doc_ids) else ""
            query = " ".join(first.split()[:16]) or "warm-up"
            uncached(self.encoder).encode([query], view=QUERY)
            self.search(query, 1, first_stage, shortlist)
            self.ready = True
        return time.perf_counter() - started

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
            Q = self._scorer.encode(queries, stats)
            columns, order = self._texts.columns(query, docs, rows, stats)
            reference = self.recipe.batch == "reference"
            values = self._scorer.call(Q, queries, columns, None, reference, stats)[0]
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
    ) -> CandidateScores:
        """First stage then :meth:`score`: every shortlisted candidate's score, with stats."""
        n = max(_check_k(shortlist, "shortlist"), _check_k(k))
        queries = self._check_queries(queries)
        with self._lock:
            stats = CallStats()
            Q = self._scorer.encode(queries, stats)
            lists = [np.sort(c) for c in self._first_stage(queries, Q, n, first_stage)]
            return self._scorer.score(queries, lists, Q, stats, joint=False)

    def first_stage(
        self, queries: Sequence[str], n: int = DEFAULT_SHORTLIST, kind: FirstStage = "dense"
    ) -> list[list[str]]:
        """Each query's best ``n`` document ids (best first) under the built-in first stage."""
        n = _check_k(n, "n")
        queries = self._check_queries(queries)
        with self._lock:
            lists = self._first_stage(queries, self._scorer.encode(queries, CallStats()), n, kind)
        return [[self.index.doc_ids[int(j)] for j in rows] for rows in lists]

    def score(
        self,
        queries: Sequence[str],
        candidate_lists: Sequence[Sequence[str]],
        *,
        joint: bool = False,
    ) -> CandidateScores:
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
            Q = self._scorer.encode(queries, stats)
            return self._scorer.score(queries, lists, Q, stats, joint=joint)

    def top(self, scored: CandidateScores, k: int) -> list[Ranking]:
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
        """Each document's index row if the index holds it (same id and text), else -1."""
        return self._texts.held(docs)

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
