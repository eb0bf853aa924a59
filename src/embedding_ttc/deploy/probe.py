"""Measuring a program at build time: its batch dependence and its query-time encodes.

A program from the library declares how its scores depend on the batch it is handed; a
program found by the search declares nothing, so the build measures it. After the recording
pass has filled the store, the program is run over a few sample queries, each with its own
candidates (its best :data:`PROBE_CANDIDATES` documents by cosine, at most half the corpus so
that the lists differ), served from the store exactly as a deployed query is:

1. each query alone over its own candidates, then all of them in one call, each masked to its
   own (how an ``independent`` program answers a batch, and how an evaluation shortlist batch
   hands them over): a change means the scores depend on the batch;
2. each query alone over the union of the lists, then all of them in one call over it: a
   change here means the scores depend on the *other queries* (statistics over the batch of
   queries, such as column z-scores), not only on the candidates.

The kind of batch dependence (:data:`~embedding_ttc.programs.recipe.BATCH_ANSWERS`) follows:
a change in the second is ``reference``; otherwise ``candidates``, even when neither probe saw
a change: ``independent`` (one call over the union of a request's candidates) is a claim a few
sample queries cannot prove, and a wrong one would make a query's scores depend on the rest of
its request, so a program found by the search is never served that way (the probe still
records what it saw). When a probe cannot tell, the safe answer is taken, the one
that scores a query the same whatever else is in the request: fewer than two sample queries
give ``reference`` (the other queries' effect is unmeasured); lists that all coincide (a tiny
corpus) give at least ``candidates`` (the candidates' effect is unmeasured). A program with
lexical channels is at least ``candidates`` whatever the probes saw: the lexical primitives
take their statistics (BM25's IDF and mean length) over the documents handed to them, and a
fusion of ranks (RRF) can hide that on a few short lists. Declaring more dependence than a
program has costs only time (a call per query, the reference rows); less would make a
query's scores depend on the other queries of a request. A change counts when it exceeds
:data:`TOLERANCE` times the scores' scale (BLAS sums over other shapes differ by less).

A measurement sees only the sample: a dependence that these queries and lists do not reveal
is missed, as a hand-written recipe can be wrong. The manifest keeps the measured changes
(:class:`~embedding_ttc.deploy.program_records.BatchMeasurement`) beside the answer.

The same calls count the texts the program sends to the live encoder outside
``ctx.index_time()`` per query (its query-time encodes, the most over the sample), and the
document-side texts the store lacked: any such miss means the program's index-time encodes
depend on something besides the documents, and the index could not serve it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.deploy.errors import DeployError
from embedding_ttc.deploy.program_records import BatchMeasurement
from embedding_ttc.deploy.store import IndexEmbeddingStore, StoreEncodeFn
from embedding_ttc.encoders.base import QUERY, Encoder
from embedding_ttc.encoders.encode import encode_texts
from embedding_ttc.programs.base import Context, Matrix, Program
from embedding_ttc.programs.outcome import CandidateError
from embedding_ttc.programs.output import check_output
from embedding_ttc.programs.recipe import BatchKind

PROBE_CANDIDATES = 20
"""Candidates per sample query in the probes (fewer when the corpus is small)."""
TOLERANCE = 1e-5
"""A score change counts when larger than this times ``max(1, largest |score|)``."""


@dataclass(frozen=True)
class Measured:
    """What the probes found.

    Attributes:
        batch: the measurement and the batch kind chosen.
        query_encodes: the most texts a sample query had encoded at query time, alone.
        fewest_query_encodes: the fewest (equal to ``query_encodes`` when it is constant).

    """

    batch: BatchMeasurement
    query_encodes: int
    fewest_query_encodes: int


@dataclass
class _Prober:
    """Program calls over the sample queries, served from the store as a deployed call is."""

    program: Program
    encoder: Encoder
    store: IndexEmbeddingStore
    doc_texts: Sequence[str]
    doc_ids: Sequence[str]
    D: Matrix
    queries: Sequence[str]
    Q: Matrix
    misses: int = 0

    def call(
        self, rows: list[int], lists: list[NDArray[np.intp]]
    ) -> tuple[list[NDArray[np.float32]], int]:
        """Scores of each query's candidates (aligned with its list), and query-time texts."""
        cols = np.unique(np.concatenate(lists))
        local = None
        if any(len(c) != len(cols) for c in lists):
            local = tuple(np.searchsorted(cols, c).astype(np.intp) for c in lists)
        Q = self.Q[rows]
        D = np.asarray(self.D[cols], dtype=np.float32)
        S = Q @ D.T
        enc = StoreEncodeFn(self.store, self.encoder)
        ctx = Context(
            encode_fn=enc,
            query_texts=tuple(self.queries[i] for i in rows),
            doc_texts=tuple(self.doc_texts[int(j)] for j in cols),
            query_ids=tuple(f"sample-{i}" for i in rows),
            doc_ids=tuple(self.doc_ids[int(j)] for j in cols),
            candidates=local,
            views_collapsed=self.encoder.info.collapsed,
            index_time=enc.index_time,
        )
        try:
            out = check_output(self.program(Q, D, S, ctx), S.shape, self.program.name)
        except CandidateError as exc:
            raise DeployError(
                f"program {self.program.name} failed while its batch dependence was measured "
                f"({exc.status.value}): {exc.reason}"
            ) from None
        self.misses += enc.stats.index_misses
        rows_out = [out[i] if local is None else out[i, local[i]] for i in range(len(rows))]
        return rows_out, enc.stats.query_texts


def _moved(alone: list[NDArray[np.float32]], joint: list[NDArray[np.float32]]) -> float:
    """The largest change between two scorings, relative to ``max(1, largest |score|)``."""
    scale = max(1.0, *(float(np.abs(a).max(initial=0.0)) for a in alone))
    diff = max(float(np.abs(a - j).max(initial=0.0)) for a, j in zip(alone, joint, strict=True))
    return diff / scale


def _own_lists(S: Matrix, k: int) -> list[NDArray[np.intp]]:
    """Each query's best ``k`` columns by cosine (ties: lower index), ascending."""
    out = []
    for row in S:
        order = np.lexsort((np.arange(row.size), -row))
        out.append(np.sort(order[:k]).astype(np.intp))
    return out


def _answer(
    n_queries: int, same_lists: bool, own: float, shared: float, lexical: bool
) -> tuple[BatchKind, str]:
    if n_queries < 2:
        return "reference", (
            "fewer than two sample queries, so the effect of other queries could not be "
            "measured: the safe answer, a reference sample of queries, is taken"
        )
    if shared > TOLERANCE:
        return "reference", (
            "a query's scores change when other queries are scored with it over the same "
            "candidates: statistics over the batch of queries"
        )
    if own > TOLERANCE:
        return "candidates", (
            "a query's scores change with the other candidates handed over with it, not with "
            "the other queries: statistics over the candidates"
        )
    if lexical:
        return "candidates", (
            "the probes saw no change, but its lexical channels take their statistics over "
            "the documents it is handed: the safe answer, one call per query, is taken"
        )
    if same_lists:
        return "candidates", (
            "every sample query had the same candidates, so the effect of other candidates "
            "could not be measured: the safe answer, one call per query, is taken"
        )
    return "candidates", (
        "the probes saw no change from other queries or candidates, but a few sample queries "
        "cannot prove that none ever does: the safe answer, one call per query, is taken"
    )


def measure(
    program: Program,
    encoder: Encoder,
    store: IndexEmbeddingStore,
    doc_texts: Sequence[str],
    doc_ids: Sequence[str],
    D: Matrix,
    queries: Sequence[str],
    *,
    lexical: bool,
) -> Measured:
    """Measure ``program``'s batch dependence and query-time encodes (module docstring).

    ``lexical``: the program has lexical channels (at least ``candidates``, whatever is seen).

    Raises:
        DeployError: the program failed in a probe, or asked at query time for document-side
            texts the store lacks (its index-time encodes depend on more than the documents).

    """
    queries = list(dict.fromkeys(queries))  # a repeated query would measure nothing new
    Q = encode_texts(encoder, queries, QUERY)
    n = len(queries)
    k = min(PROBE_CANDIDATES, max(1, len(doc_texts) // 2))
    prober = _Prober(program, encoder, store, doc_texts, doc_ids, D, queries, Q)
    own = _own_lists(Q @ np.asarray(D, dtype=np.float32).T, k)
    union = np.unique(np.concatenate(own))
    alone_own, counts = [], []
    for i in range(n):
        scores, texts = prober.call([i], [own[i]])
        alone_own += scores
        counts.append(texts)
    joint_own, _ = prober.call(list(range(n)), own)
    alone_union = []
    for i in range(n):
        scores, texts = prober.call([i], [union])
        alone_union += scores
        counts.append(texts)
    joint_union, _ = prober.call(list(range(n)), [union] * n)
    if prober.misses:
        raise DeployError(
            f"program {program.name} asked at query time for {prober.misses} document-side "
            "texts (inside ctx.index_time()) that the recording pass over the documents did "
            "not produce: its index-time encodes depend on the queries or the candidates, "
            "which an index cannot store"
        )
    moved_own = _moved(alone_own, joint_own) if n > 1 else None
    moved_shared = _moved(alone_union, joint_union) if n > 1 else None
    same = all(np.array_equal(o, own[0]) for o in own)
    kind, why = _answer(n, same, moved_own or 0.0, moved_shared or 0.0, lexical)
    batch = BatchMeasurement(
        sample_queries=n,
        candidates_per_query=k,
        own_lists_moved=moved_own,
        shared_list_moved=moved_shared,
        tolerance=TOLERANCE,
        answer=kind,
        why=why,
    )
    return Measured(batch, max(counts), min(counts))
