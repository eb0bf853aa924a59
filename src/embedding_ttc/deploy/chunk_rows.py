"""Index-time embeddings by stored row: a candidate set's chunks and documents by arithmetic.

A segment stores, per index-time encode its program declares (``sentence@retrieval.passage``,
``document@retrieval.query`` and the like), a chunk table: the segment row owning each text
and the text's row in the segment's store group (``chunks/NN.owner.npy``,
``chunks/NN.rows.npy``; :mod:`.segment`). The owners are non-decreasing, so each document's
texts are one range of the table; its start and end per document (:class:`ChunkRows`,
computed once per segment on first use) turn a candidate set into its embeddings by
vectorised index arithmetic and one gather from the memory-mapped store: no chunk text is cut
from the documents, and no text is hashed to be looked up.

Served rows are the store rows the text lookup would find: a segment holds every index-time
text its own documents need, copied byte for byte from an earlier segment that held it
(:func:`~embedding_ttc.deploy.build.extend_index`), so the same embeddings in the same order.
Documents given as texts that the index does not hold (the texts-in path of the reranker) have
their texts cut and encoded through the call's ``encode_fn`` as before, where the recording
pass of those documents serves them (:class:`ColumnEmbeddings`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.deploy.arrays import load_array
from embedding_ttc.deploy.errors import IndexCorruptError
from embedding_ttc.deploy.manifest import ChunkRecord
from embedding_ttc.deploy.segment import Segment
from embedding_ttc.deploy.store import StoreEncodeFn, StoreKey
from embedding_ttc.encoders.base import Embeddings
from embedding_ttc.programs.primitives.channels import SPLITTERS
from embedding_ttc.programs.primitives.text_analysis import ragged_positions, take_rows
from embedding_ttc.programs.recipe import Artifact


class ChunkRows:
    """One chunk table of a segment: per document, the store rows of its texts, in order.

    The table's files are memory-mapped when the index is loaded (so a loaded index keeps
    serving after a compaction removed them); the per-document ranges are computed on first
    use, once.
    """

    def __init__(self, segment: Segment, record: ChunkRecord) -> None:
        group = segment.record.store[record.group]
        self.key: StoreKey = (group.view, group.dim, group.max_length)
        self.embeddings: NDArray[np.float32] = segment.store.groups[self.key].embeddings
        self._base = segment.directory / record.file
        self._owner = load_array(Path(f"{self._base}.owner.npy"), np.int64, (record.rows,))
        self._rows = load_array(Path(f"{self._base}.rows.npy"), np.int64, (record.rows,))
        self._documents = segment.size

    @functools.cached_property
    def indptr(self) -> NDArray[np.int64]:
        """Where each document's chunks start in :attr:`rows` (``n_docs + 1`` entries).

        Raises:
            IndexCorruptError: the table is not one of this segment's documents' chunks.

        """
        owner, rows, n = self._owner, self._rows, self._documents
        steps = np.diff(owner)
        if (
            (owner.size and (owner[0] != 0 or owner[-1] != n - 1))
            or np.any((steps != 0) & (steps != 1))
            or (rows.size and (rows.min() < 0 or rows.max() >= len(self.embeddings)))
        ):
            raise IndexCorruptError(f"index files {self._base}.*.npy are not a chunk table")
        return np.searchsorted(owner, np.arange(n + 1, dtype=np.int64)).astype(np.int64)

    @property
    def rows(self) -> NDArray[np.int64]:
        """The store row of each chunk, documents in order (memory-mapped)."""
        return self._rows


def _tables(segment: Segment) -> dict[str, ChunkRows]:
    """The chunk tables of ``segment`` whose store group it holds, by artifact label."""
    out = {}
    for record in segment.record.chunks:
        group = segment.record.store[record.group]
        if (group.view, group.dim, group.max_length) in segment.store.groups:
            out[record.artifact] = ChunkRows(segment, record)
    return out


class IndexChunks:
    """The chunk tables of an index's segments, read as one over rows numbered across them.

    Args:
        segments: the index's segments, in row order.
        starts: the first row of each segment (and the total after the last).

    """

    def __init__(self, segments: Sequence[Segment], starts: NDArray[np.intp]) -> None:
        self.segments = tuple(segments)
        self.starts = np.asarray(starts, dtype=np.intp)
        self._per_segment = [_tables(s) for s in self.segments]

    def tables(self, label: str) -> tuple[ChunkRows, ...] | None:
        """Each segment's table of the artifact ``label``; ``None`` unless every one has it."""
        if not self._per_segment or any(label not in t for t in self._per_segment):
            return None
        return tuple(t[label] for t in self._per_segment)

    def gather(
        self, label: str, rows: NDArray[np.intp]
    ) -> tuple[NDArray[np.int64], Embeddings] | None:
        """The chunk count of each of ``rows`` and their chunks' embeddings, rows in order.

        ``None`` when the index has no table of the artifact ``label``.
        """
        tables = self.tables(label)
        if tables is None:
            return None
        rows = np.asarray(rows, dtype=np.intp)
        which = np.searchsorted(self.starts, rows, side="right") - 1
        local = rows - self.starts[which]
        first = np.empty(rows.size, dtype=np.int64)
        lengths = np.empty(rows.size, dtype=np.int64)
        parts = np.unique(which)
        for s in parts:
            at = which == s
            indptr = tables[int(s)].indptr
            first[at] = indptr[local[at]]
            lengths[at] = indptr[local[at] + 1] - first[at]
        if len(parts) == 1:  # one segment: one gather, straight into a new array
            table = tables[int(parts[0])]
            picked = table.rows[ragged_positions(first, lengths)]
            return lengths, take_rows(table.embeddings, picked)
        width = tables[0].embeddings.shape[1]
        out = np.empty((int(lengths.sum()), width), dtype=np.float32)
        offsets = np.cumsum(lengths) - lengths
        for s in parts:
            at = which == s
            table = tables[int(s)]
            picked = table.rows[ragged_positions(first[at], lengths[at])]
            out[ragged_positions(offsets[at], lengths[at])] = take_rows(table.embeddings, picked)
        return lengths, out


class ColumnEmbeddings:
    """A call's index-time embeddings: stored rows of held columns, then live texts' encodes.

    The :class:`~embedding_ttc.programs.base.StoredEmbeddingSource` the reranker hands its
    program: the columns are the index ``rows`` (in column order), then ``live_texts``,
    documents the index does not hold, whose texts are cut and encoded through ``encode_fn``
    (inside its ``index_time``: the recording pass of those documents serves them). Rows
    served from the index count as ``encode_fn``'s store texts.
    """

    def __init__(
        self,
        index: IndexChunks,
        rows: NDArray[np.intp],
        live_texts: Sequence[str],
        encode_fn: StoreEncodeFn,
    ) -> None:
        self.index = index
        self.rows = np.asarray(rows, dtype=np.intp)
        self.live_texts = tuple(live_texts)
        self.encode_fn = encode_fn

    def embeddings(
        self, unit: str, view: str, max_length: int | None, max_per_doc: int | None
    ) -> tuple[NDArray[np.intp], Embeddings] | None:
        """The owner and embedding of each text of an index-time encode of the call's columns.

        ``None`` when the index has no table of that encode (the program then encodes through
        ``encode_fn``, which looks the texts up in the store).
        """
        if unit != "document" and unit not in SPLITTERS:
            return None
        artifact = Artifact(unit, view, max_length, max_per_doc=max_per_doc)
        label = artifact.describe()
        tables = self.index.tables(label)
        if tables is None or tables[0].key != artifact.key:
            return None
        held = self.index.gather(label, self.rows)
        if held is None:
            return None
        lengths, emb = held
        self.encode_fn.stats.store_texts += emb.shape[0]
        owner = np.repeat(np.arange(self.rows.size, dtype=np.intp), lengths)
        if not self.live_texts:
            return owner, emb
        live = artifact.texts(self.live_texts)
        with self.encode_fn.index_time():
            live_emb = self.encode_fn(live.texts, view, None, max_length)
        return (
            np.concatenate([owner, live.owner + self.rows.size]).astype(np.intp),
            np.concatenate([emb, np.asarray(live_emb, dtype=np.float32)]),
        )
