"""The embedding store of a deployed index: recorded at build time, served at query time.

A deployed program runs unchanged. The Context it receives has an ``encode_fn`` served from
the index (:class:`StoreEncodeFn`): each text is looked up in an :class:`IndexEmbeddingStore` under
its key ``(view, dim, max_length)`` and only texts the store lacks reach the live encoder. So
the query path never re-encodes a stored document, and every library program deploys without
being rewritten.

The store is filled at build time by running the program with a few sample queries and
recording every encode made inside ``ctx.index_time()`` (the document-side, amortisable work
of :mod:`embedding_ttc.programs.base`): over the whole corpus for a program file, over the
first block for a library program, whose recipe's artifacts are then encoded for the rest
(:mod:`~embedding_ttc.deploy.recording`). Encodes outside it are
query-time work (the expansions of DiverseDualCtx and its successors, built from the top
documents' sentences, depend on the query): they go to the live encoder at query time. What
the recording must produce is declared by each program (its
:class:`~embedding_ttc.programs.recipe.Recipe`). A batch-statistics program also gets the
index's :class:`Reference` query sample.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Protocol

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.encoders.base import QUERY, Embeddings, Encoder, check_view

RECORD_CHUNK = 512
"""Texts per encoder call when a build records index-time encodes."""


# --- the embedding store ---------------------------------------------------------------------

StoreKey = tuple[str, int | None, int | None]
"""``(view, dim, max_length)``; ``dim`` is ``None`` for the encoder's full dimension."""


@dataclass(frozen=True, eq=False)  # array fields have no boolean equality
class StoreGroup:
    """The embeddings of distinct texts under one key (rows aligned with ``texts``)."""

    texts: Sequence[str]
    embeddings: Embeddings
    rows: Mapping[str, int]

    @classmethod
    def of(cls, texts: Sequence[str], embeddings: Embeddings) -> StoreGroup:
        """Index ``texts`` (distinct) by row."""
        if len(texts) != embeddings.shape[0]:
            raise ValueError(f"{len(texts)} texts for {embeddings.shape[0]} embedding rows")
        rows = {t: i for i, t in enumerate(texts)}
        if len(rows) != len(texts):
            raise ValueError("a store group holds each text once")
        return cls(texts, embeddings, rows)


@dataclass(frozen=True)
class IndexEmbeddingStore:
    """Read-only ``(view, dim, max_length, text) -> embedding`` lookups over stored matrices.

    What one index segment recorded at build time; the encoder cache's SQLite database is the
    other store (:class:`~embedding_ttc.encoders.cache_store.CacheStore`).
    """

    groups: Mapping[StoreKey, StoreGroup] = field(default_factory=dict)

    def rows(self, key: StoreKey, texts: Sequence[str]) -> NDArray[np.intp]:
        """The row of each text in the group of ``key`` (``-1`` where it is absent)."""
        group = self.groups.get(key)
        if group is None:
            return np.full(len(texts), -1, dtype=np.intp)
        get = group.rows.get
        return np.fromiter((get(t, -1) for t in texts), dtype=np.intp, count=len(texts))

    def take(self, key: StoreKey, rows: NDArray[np.intp]) -> Embeddings:
        """The embeddings of ``rows`` (from :meth:`rows`, none ``-1``) of the group of ``key``."""
        return np.asarray(self.groups[key].embeddings[rows], dtype=np.float32)

    @property
    def n_rows(self) -> int:
        """Total stored embeddings."""
        return sum(g.embeddings.shape[0] for g in self.groups.values())


class StoreLookup(Protocol):
    """What an ``encode_fn`` served from an index asks of its store."""

    def rows(self, key: StoreKey, texts: Sequence[str]) -> NDArray[np.intp]:
        """The row of each text under ``key`` (``-1`` where it is absent)."""
        ...

    def take(self, key: StoreKey, rows: NDArray[np.intp]) -> Embeddings:
        """The embeddings of ``rows`` under ``key``."""
        ...


@dataclass(frozen=True)
class SegmentedStore:
    """The stores of an index's segments, looked up in segment order (the first holder wins).

    Rows are numbered across the segments: the rows of a key in the first segment, then in
    the second, and so on. A segment holds every index-time text its own documents need, so
    a text held by several segments has one row in each; the earliest serves it.
    """

    parts: tuple[IndexEmbeddingStore, ...]

    def _starts(self, key: StoreKey) -> NDArray[np.intp]:
        sizes = [len(p.groups[key].texts) if key in p.groups else 0 for p in self.parts]
        return np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)

    def rows(self, key: StoreKey, texts: Sequence[str]) -> NDArray[np.intp]:
        """The row of each text in the first segment holding it (``-1`` where none does)."""
        out = np.full(len(texts), -1, dtype=np.intp)
        starts = self._starts(key)
        for part, start in zip(self.parts, starts, strict=False):
            todo = np.flatnonzero(out < 0)
            if todo.size == 0:
                break
            found = part.rows(key, [texts[int(i)] for i in todo])
            hit = found >= 0
            out[todo[hit]] = found[hit] + start
        return out

    def take(self, key: StoreKey, rows: NDArray[np.intp]) -> Embeddings:
        """The embeddings of rows numbered across the segments."""
        starts = self._starts(key)
        part_of = np.searchsorted(starts, rows, side="right") - 1
        width = next(p.groups[key].embeddings.shape[1] for p in self.parts if key in p.groups)
        out = np.empty((len(rows), width), dtype=np.float32)
        for i in np.unique(part_of):
            mask = part_of == i
            out[mask] = self.parts[int(i)].take(key, rows[mask] - starts[i])
        return out

    @property
    def groups(self) -> Mapping[StoreKey, StoreGroup]:
        """The groups of a store of one segment (tests and tools; several: an error)."""
        if len(self.parts) != 1:
            raise ValueError("a store of several segments has no single group per key")
        return self.parts[0].groups

    @property
    def n_rows(self) -> int:
        """Total stored embeddings, over every segment."""
        return sum(p.n_rows for p in self.parts)


@dataclass(frozen=True)
class Reference:
    """The reference query sample of a batch-statistics program (rows aligned with ``texts``).

    A deployed query is scored with these rows appended to its batch, so that statistics over
    the queries (BidirZScore's column z-scores) have a batch to be taken over.
    """

    texts: tuple[str, ...]
    embeddings: Embeddings


class _HeldRows:
    """A key's recorded embeddings in memory, as recorded blocks."""

    def __init__(self) -> None:
        self._parts: list[Embeddings] = []

    def append(self, block: Embeddings) -> None:
        self._parts.append(block)

    def take(self, rows: NDArray[np.intp]) -> Embeddings:
        if len(self._parts) > 1:
            self._parts[:] = [np.concatenate(self._parts)]
        return self._parts[0][rows]

    def whole(self) -> Embeddings:
        return np.concatenate(self._parts)


class _SpilledRows:
    """A key's recorded embeddings appended to a raw float32 file, memory-mapped to read."""

    def __init__(self, path: Path, width: int) -> None:
        self.path, self.width, self.rows = path, width, 0
        self._file: BinaryIO | None = open(path, "ab")  # noqa: SIM115 (closed by whole())

    def append(self, block: Embeddings) -> None:
        assert self._file is not None, "a spilled group is read whole only once recorded"
        self._file.write(np.ascontiguousarray(block, dtype=np.float32).tobytes())
        self.rows += block.shape[0]

    def _mapped(self) -> Embeddings:
        return np.memmap(self.path, dtype=np.float32, mode="r", shape=(self.rows, self.width))

    def take(self, rows: NDArray[np.intp]) -> Embeddings:
        if self._file is not None:
            self._file.flush()
        return np.asarray(self._mapped()[rows])

    def whole(self) -> Embeddings:
        if self._file is not None:
            self._file.close()
            self._file = None
        return self._mapped()


class StoreBuilder:
    """Embeddings recorded at build time, grouped by key, each text once.

    Args:
        spill: a folder for the embeddings (one raw float32 file per key, appended as they
            are recorded, and memory-mapped by :meth:`groups`), so that a build's memory holds
            the texts but not their embeddings: LexicalHybridRRF over a million short documents
            records about six million of them. ``None``: kept in memory.

    """

    def __init__(self, spill: Path | None = None) -> None:
        self.spill = spill
        self._texts: dict[StoreKey, dict[str, int]] = {}
        self._rows: dict[StoreKey, _HeldRows | _SpilledRows] = {}

    def _group(self, key: StoreKey, width: int) -> _HeldRows | _SpilledRows:
        if key not in self._rows:
            if self.spill is None:
                self._rows[key] = _HeldRows()
            else:
                self._rows[key] = _SpilledRows(self.spill / f"{len(self._rows):02d}.f32", width)
        return self._rows[key]

    def add(self, key: StoreKey, texts: Sequence[str], embeddings: Embeddings) -> None:
        """Record the texts of ``key`` not recorded yet."""
        seen = self._texts.setdefault(key, {})
        keep = []
        for i, text in enumerate(texts):
            if text not in seen:
                seen[text] = len(seen)
                keep.append(i)
        if keep:
            block = np.ascontiguousarray(embeddings[keep], dtype=np.float32)
            self._group(key, block.shape[1]).append(block)

    def rows(self, key: StoreKey, texts: Sequence[str]) -> NDArray[np.intp]:
        """Like :meth:`IndexEmbeddingStore.rows` over what is recorded so far."""
        seen = self._texts.get(key, {})
        return np.fromiter((seen.get(t, -1) for t in texts), dtype=np.intp, count=len(texts))

    def embedding_rows(self, key: StoreKey, rows: NDArray[np.intp]) -> Embeddings:
        """Recorded embeddings by row."""
        return self._rows[key].take(rows)

    def groups(self) -> dict[StoreKey, tuple[list[str], Embeddings]]:
        """Everything recorded: per key, its texts and their embeddings (row-aligned).

        With a spill folder the embeddings are memory-mapped from it (it must outlive them)
        and nothing can be recorded after this call.
        """
        out: dict[StoreKey, tuple[list[str], Embeddings]] = {}
        for key, seen in self._texts.items():
            if seen:
                out[key] = (list(seen), self._rows[key].whole())
        return out


@dataclass
class EncodeStats:
    """What one program call asked of its ``encode_fn``.

    Attributes:
        store_texts: texts served from the index.
        live_texts: texts sent to the live encoder (query-time work, or recorded at build).
        live_calls: calls to the live encoder.
        live_seconds: seconds spent in those calls.
        index_misses: texts asked for inside ``ctx.index_time()`` that the index lacks
            (encoded live; zero for an index built for this program).
        query_texts: texts encoded outside ``ctx.index_time()`` by the live encoder.

    """

    store_texts: int = 0
    live_texts: int = 0
    live_calls: int = 0
    live_seconds: float = 0.0
    index_misses: int = 0
    query_texts: int = 0


class StoreEncodeFn:
    """An ``encode_fn`` served from an :class:`IndexEmbeddingStore`, live for the rest.

    With a ``recorder`` (build time), texts encoded inside :meth:`index_time` are recorded
    into it, and served from it when asked again; ``progress`` is then called with the number
    of texts each chunk of :data:`RECORD_CHUNK` encoded. Build one per program call: it carries
    that call's :class:`EncodeStats` and its ``index_time`` depth.
    """

    def __init__(
        self,
        store: StoreLookup,
        live: Encoder,
        recorder: StoreBuilder | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        self.store = store
        self.live = live
        self.recorder = recorder
        self.progress = progress
        self.stats = EncodeStats()
        self._depth = 0

    @contextmanager
    def _scope(self) -> Iterator[None]:
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1

    def index_time(self) -> AbstractContextManager[None]:
        """The context's ``index_time``: encodes inside are document-side work."""
        return self._scope()

    def _key(self, view: str, dim: int | None, max_length: int | None) -> StoreKey:
        full = self.live.info.dim
        return (check_view(view), None if dim in (None, full) else dim, max_length)

    def __call__(
        self,
        texts: Sequence[str],
        view: str = QUERY,
        dim: int | None = None,
        max_length: int | None = None,
    ) -> Embeddings:
        """Encode ``texts``: stored rows first, then recorded ones, then the live encoder."""
        texts = list(texts)
        key = self._key(view, dim, max_length)
        width = dim or self.live.info.dim
        out = np.empty((len(texts), width), dtype=np.float32)
        rows = self.store.rows(key, texts)
        hit = rows >= 0
        if hit.any():
            out[hit] = self.store.take(key, rows[hit])
        self.stats.store_texts += int(hit.sum())
        missing = np.flatnonzero(~hit)
        if missing.size and self.recorder is not None:
            rec = self.recorder.rows(key, [texts[i] for i in missing])
            found = rec >= 0
            if found.any():
                out[missing[found]] = self.recorder.embedding_rows(key, rec[found])
            missing = missing[~found]
        if missing.size:
            self._encode_live(texts, missing, key, out)
        return out

    def _encode_live(
        self, texts: list[str], missing: NDArray[np.intp], key: StoreKey, out: Embeddings
    ) -> None:
        view, dim, max_length = key
        recording = self._depth > 0 and self.recorder is not None
        # At build time, index-time texts go in chunks, longest first (low padding): a long
        # build then fills an on-disk cache as it goes, resumes from it after an interruption,
        # and reports progress. Elsewhere, one call.
        order = sorted(missing.tolist(), key=lambda i: -len(texts[i])) if recording else missing
        step = RECORD_CHUNK if recording else max(len(order), 1)
        for start in range(0, len(order), step):
            rows = np.asarray(order[start : start + step], dtype=np.intp)
            todo = [texts[i] for i in rows]
            began = time.perf_counter()
            fresh = self.live.encode(todo, view=view, dim=dim, max_length=max_length)
            self.stats.live_seconds += time.perf_counter() - began
            self.stats.live_calls += 1
            self.stats.live_texts += len(todo)
            out[rows] = fresh
            if self._depth == 0:
                self.stats.query_texts += len(todo)
            elif self.recorder is not None:
                self.recorder.add(key, todo, fresh)
                if self.progress is not None:
                    self.progress(len(todo))
            else:
                self.stats.index_misses += len(todo)
