"""One immutable segment of an index: its documents and everything computed from them alone.

Layout of ``segments/NNNNNN/`` (every file listed in its :class:`SegmentRecord` with its size
and SHA-256, computed when the segment is written; nothing in it changes afterwards but its
ANN index, which ``index ann`` replaces by a new file, :mod:`.reindex`)::

    documents.npy        D, its documents under retrieval.passage (float32, rows x dim)
    docs.jsonl, docs.offsets.npy, ids.jsonl, docs.hash.npy
                         its documents' texts, read by row (:mod:`.doc_table`)
    store/NN.npy         the program's index-time embeddings of its documents, one group per
    store/NN.jsonl         (view, dim, max_length), each text once; the texts a line each
    chunks/NN.owner.npy  per declared artifact: the segment row of each of its texts
    chunks/NN.rows.npy     and that text's row in the segment's store group
    bm25/                the bm25s index of its documents (absent when they have no token)
    ann.faiss            its FAISS IVF index, above a size (:mod:`.ann`; ``ann-N.faiss`` once
                           re-indexed)

A segment is self-contained: its store holds every index-time text its documents need (a text
an earlier segment already holds is copied, not re-encoded), so it can be merged, searched or
dropped alone. A further per-document artifact is one more file here, listed like the rest.

A segment is staged beside its final folder (``segments/.NNNNNN.tmp-*``), renamed into place,
and only then listed by a new manifest (written atomically): a folder the manifest does not
list is what an interrupted writer left, ignored on load and removed by :func:`sweep` under the
index's lock.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.deploy.ann import ANN_GLOB, AnnPolicy, build_ann, load_ann
from embedding_ttc.deploy.arrays import load_array, read_lines
from embedding_ttc.deploy.corpus import Document
from embedding_ttc.deploy.doc_table import DocTable, write_doc_table
from embedding_ttc.deploy.errors import IndexCorruptError
from embedding_ttc.deploy.manifest import (
    MANIFEST,
    REFERENCE,
    SEGMENTS,
    SPILL,
    ChunkRecord,
    Manifest,
    SegmentRecord,
    StoreRecord,
)
from embedding_ttc.deploy.recording import ChunkTable
from embedding_ttc.deploy.store import IndexEmbeddingStore, StoreGroup, StoreKey
from embedding_ttc.durable import (
    check_files,
    checksums,
    publish_dir,
    save_array,
    save_stacked,
    staging_dir,
    write_lines,
)
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.text_analysis import TextAnalyses, Vocabulary, analyze

DOCUMENTS = "documents.npy"
BM25_DIR = "bm25"
ANALYSES_DIR = "analyses"


# --- in memory --------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Segment:
    """A loaded segment.

    Attributes:
        directory: its folder.
        record: its record in the manifest.
        documents: its ``D`` rows (memory-mapped).
        table: its documents' texts, read by row.
        store: its index-time embeddings.
        bm25: its BM25 index (statistics of its own documents).
        ann: its FAISS index (memory-mapped), or ``None``: searched exactly.
        analyses: its documents' text analyses (a lexical program's index; memory-mapped),
            their vocabulary extending the previous segment's, else ``None``.

    """

    directory: Path
    record: SegmentRecord
    documents: NDArray[np.float32]
    table: DocTable
    store: IndexEmbeddingStore
    bm25: BM25
    ann: Any
    analyses: TextAnalyses | None = None

    @property
    def size(self) -> int:
        """Its number of documents."""
        return self.record.documents

    @classmethod
    def open(cls, root: Path, record: SegmentRecord, dim: int, *, verify: bool) -> Segment:
        """Load the segment of ``record`` of the index at ``root`` (files checked first).

        Raises:
            IndexCorruptError: a file is missing, of the wrong size (or SHA-256, with
                ``verify``), or unreadable.

        """
        directory = root / SEGMENTS / record.name
        check_files(
            directory,
            record.files,
            verify=verify,
            error=IndexCorruptError,
            what="index file",
            remedy="rebuild the index",
        )
        n = record.documents
        documents = load_array(directory / DOCUMENTS, np.float32, (n, dim))
        table = DocTable.open(directory, n)
        groups = {}
        for rec in record.store:
            emb = load_array(directory / f"{rec.file}.npy", np.float32, (rec.rows, rec.dim or dim))
            texts = read_lines(directory / f"{rec.file}.jsonl")
            if len(texts) != rec.rows:
                raise IndexCorruptError(f"index file {directory / rec.file}.jsonl: wrong row count")
            groups[(rec.view, rec.dim, rec.max_length)] = StoreGroup.of(texts, emb)
        bm25 = _load_bm25(directory, n, record.bm25_empty)
        ann = load_ann(directory, record.ann)
        analyses = (
            _load_analyses(directory, n) if f"{ANALYSES_DIR}/meta.json" in record.files else None
        )
        store = IndexEmbeddingStore(groups)
        return cls(directory, record, documents, table, store, bm25, ann, analyses)

    def documents_iter(self) -> Iterator[Document]:
        """Its documents, in row order, read one at a time."""
        for row in range(self.size):
            yield self.table.document(row)


def _load_analyses(directory: Path, n: int) -> TextAnalyses:
    folder = directory / ANALYSES_DIR
    try:
        analyses = TextAnalyses.load(folder)
    except ValueError as exc:
        raise IndexCorruptError(f"index folder {folder}: {exc}") from None
    if analyses.n_docs != n:
        raise IndexCorruptError(f"index folder {folder} holds {analyses.n_docs} documents, not {n}")
    return analyses


def _load_bm25(directory: Path, n: int, empty: bool) -> BM25:
    if empty:
        return BM25(n_docs=n, _retriever=None)
    import bm25s

    folder = directory / BM25_DIR
    try:
        retriever = bm25s.BM25.load(str(folder), mmap=True, show_progress=False)
    except (ValueError, OSError, KeyError) as exc:
        raise IndexCorruptError(f"index folder {folder} is unreadable ({exc})") from None
    return BM25(n_docs=n, _retriever=retriever)


# --- written ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SegmentContent:
    """What a new segment holds, before it is written.

    Attributes:
        docs: its documents, in row order (read once, as they are written).
        documents: row blocks of its ``D`` (concatenated as they are written).
        groups: per store key, its texts (distinct) and row blocks of their embeddings.
        chunks: its chunk tables (owners: rows of this segment).
        analyse: write its documents' text analyses (a lexical program's index).
        vocabulary: the vocabulary they extend (the previous segment's), else a new one.
        queries: query-view embeddings to calibrate its ANN index on (``None``: midpoints of
            its documents; :func:`~.ann.build_ann`).

    """

    docs: Iterable[Document]
    documents: Sequence[NDArray[np.float32]]
    groups: Mapping[StoreKey, tuple[Sequence[str], Sequence[NDArray[np.float32]]]]
    chunks: Sequence[ChunkTable]
    analyse: bool = False
    vocabulary: Vocabulary | None = None
    queries: NDArray[np.float32] | None = None


def write_segment(
    directory: Path, name: str, content: SegmentContent, dim: int, policy: AnnPolicy
) -> SegmentRecord:
    """Write ``content`` into the (staged, empty) folder ``directory``; return its record."""
    save_stacked(directory / DOCUMENTS, content.documents, dim)
    n = write_doc_table(directory, content.docs)
    store = []
    keys = list(content.groups)
    for i, key in enumerate(keys):
        texts, parts = content.groups[key]
        rel = f"store/{i:02d}"
        save_stacked(directory / f"{rel}.npy", parts, key[1] or dim)
        write_lines(directory / f"{rel}.jsonl", iter(texts))
        view, dim_, max_length = key
        store.append(
            StoreRecord(file=rel, view=view, dim=dim_, max_length=max_length, rows=len(texts))
        )
    chunks = []
    for i, (label, key, owner, rows) in enumerate(content.chunks):
        rel = f"chunks/{i:02d}"
        save_array(directory / f"{rel}.owner.npy", owner.astype(np.int64))
        save_array(directory / f"{rel}.rows.npy", rows.astype(np.int64))
        chunks.append(
            ChunkRecord(file=rel, artifact=label, group=keys.index(key), rows=int(owner.size))
        )
    table = DocTable.open(directory, n)
    if content.analyse:
        base = content.vocabulary
        texts = [table.joined(row) for row in range(n)]
        analyze(texts, Vocabulary(base=base) if base is not None else None).save(
            directory / ANALYSES_DIR
        )
        del texts
    bm25 = BM25.fit(table.joined(row) for row in range(n))
    if bm25._retriever is not None:  # the wrapper's bm25s index (None: no token at all)
        bm25._retriever.save(str(directory / BM25_DIR), show_progress=False)
    D = load_array(directory / DOCUMENTS, np.float32, (n, dim))
    ann = build_ann(D, directory, policy, content.queries)
    del D, table
    return SegmentRecord(
        name=name,
        documents=n,
        store=store,
        chunks=chunks,
        bm25_empty=bm25._retriever is None,
        ann=ann,
        files=checksums(directory),
    )


def segment_name(number: int) -> str:
    """The folder name of the segment numbered ``number`` (six digits)."""
    return f"{number:06d}"


def next_segment_name(root: Path, manifest: Manifest) -> str:
    """A name above every segment listed or left on disk."""
    taken = [int(s.name) for s in manifest.segments if s.name.isdigit()]
    folder = root / SEGMENTS
    if folder.is_dir():
        taken += [int(p.name) for p in folder.iterdir() if p.name.isdigit()]
    return segment_name(max(taken, default=-1) + 1)


def publish_segment(
    root: Path, name: str, content: SegmentContent, dim: int, policy: AnnPolicy
) -> SegmentRecord:
    """Stage the segment beside ``segments/NAME`` and rename it into place (not yet listed)."""
    final = root / SEGMENTS / name
    with staging_dir(final) as tmp:
        record = write_segment(tmp, name, content, dim, policy)
        publish_dir(tmp, final)
    return record


def sweep(root: Path, manifest: Manifest) -> list[str]:
    """Remove what interrupted writers left: unlisted segments, staged folders, old files.

    Inside a listed segment, an ANN file it does not list (``ann*.faiss``: an interrupted
    re-indexing's, or one it replaced) goes too.

    Only under the index's lock. Returns what was removed (relative paths).
    """
    removed = []
    listed = {s.name for s in manifest.segments}
    folder = root / SEGMENTS
    if folder.is_dir():
        for path in sorted(folder.iterdir()):
            if path.name not in listed:
                _remove(path)
                removed.append(f"{SEGMENTS}/{path.name}")
        removed += _sweep_ann_files(folder, manifest)
    for path in root.iterdir():  # temporary files of an interrupted manifest write
        if path.name.startswith((f".{MANIFEST}.", f".{REFERENCE}.", f".{SPILL}.")):
            _remove(path)
            removed.append(path.name)
    return removed


def _sweep_ann_files(folder: Path, manifest: Manifest) -> list[str]:
    """Remove the ANN files listed segments do not list (``segments/NAME/ann*.faiss``)."""
    removed = []
    for segment in manifest.segments:
        if not segment.name:
            continue
        for path in sorted((folder / segment.name).glob(ANN_GLOB)):
            if path.name not in segment.files:
                _remove(path)
                removed.append(f"{SEGMENTS}/{segment.name}/{path.name}")
    return removed


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
