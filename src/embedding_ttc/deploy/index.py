"""A deployed index: a versioned directory built once per (corpus, encoder, program).

Layout (every file but the manifest is listed in it with its size and SHA-256)::

    manifest.json        schema_version, encoder identity, program and its split, counts, files
    documents.npy        D, the documents under retrieval.passage (float32, |D| x dim)
    docs.jsonl           {"id", "title", "text"} per document, in row order
    store/NN.npy         index-time embeddings recorded from the program, one group per
    store/NN.jsonl         (view, dim, max_length); the texts of the rows, one JSON string a line
    chunks/NN.owner.npy  per declared artifact (split.py): the document of each of its texts
    chunks/NN.rows.npy     and that text's row in its store group
    reference.npy/.jsonl the reference query sample of batch-statistics programs
    bm25/                the bm25s index of the corpus (its own save format), for the BM25
                         first stage; rebuilt over all documents by :meth:`Index.add`

Arrays are opened with ``mmap_mode="r"``. A build writes into a temporary directory beside
the target (``.NAME.tmp-*``) and renames it into place at the end, so an interrupted build
leaves nothing that loads; :meth:`Index.add` writes a new directory the same way and swaps it
with the old one (``renameat2(RENAME_EXCHANGE)`` where Linux offers it, else two renames).
Loading checks the schema version and every file's size; ``verify=True`` also checks the
SHA-256s (a build computes them from the files it wrote).
"""

from __future__ import annotations

import csv
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, ValidationError

from embedding_ttc import __version__
from embedding_ttc.deploy.split import (
    EmbeddingStore,
    StoreBuilder,
    StoreEncodeFn,
    StoreGroup,
    StoreKey,
)
from embedding_ttc.durable import (
    FileEntry,
    check_files,
    checksums,
    file_lock,
    link_or_copy,
    publish_dir,
    save_array,
    save_stacked,
    staging_dir,
    write_atomic,
    write_lines,
)
from embedding_ttc.encoders.base import PASSAGE, QUERY, Embeddings, Encoder, EncoderInfo
from embedding_ttc.errors import DatasetError, EmbeddingTTCError
from embedding_ttc.evaluation.evaluate import check_output, encode_texts
from embedding_ttc.programs.base import Context, Matrix, program_version
from embedding_ttc.programs.catalog import get_program, recipe_for
from embedding_ttc.programs.primitives.chunking import split_sentences
from embedding_ttc.programs.primitives.lexical import BM25, BM25_B, BM25_K1, BM25_METHOD
from embedding_ttc.programs.recipe import Recipe
from embedding_ttc.tasks.beir import iter_jsonl
from embedding_ttc.tasks.task import join_title_text

SCHEMA_VERSION: Literal[1] = 1
MANIFEST = "manifest.json"
DOCUMENTS = "documents.npy"
DOCS = "docs.jsonl"
REFERENCE = "reference"
BM25_DIR = "bm25"

DEFAULT_REFERENCE_SIZE = 64
"""Reference queries stored for batch-statistics programs (a shortlist batch's size)."""
SAMPLE_QUERIES = 4
"""Queries the recording pass runs the program with (only its index-time encodes are kept)."""
BUILD_BLOCK = 2048
"""Documents per program call of the recording pass (bounds its memory)."""
PSEUDO_QUERY_WORDS = 16

Progress = Callable[[str, int, int], None]
"""Called with ``(stage, done, total)`` while an index is built or extended (total 0: unknown)."""


class DeployError(EmbeddingTTCError):
    """An index directory is missing, malformed, corrupted or was built differently."""


class IndexCorruptError(DeployError):
    """A file of the index does not match its manifest (the message names the file)."""


class EncoderMismatchError(DeployError):
    """The encoder given is not the one the index was built with (the message names both)."""


class ProgramVersionError(DeployError):
    """The installed program is another version than the one the index was built with."""


# --- documents and queries -------------------------------------------------------------------


@dataclass(frozen=True)
class Document:
    """One corpus document: its id, title (possibly empty) and text."""

    id: str
    title: str
    text: str

    @property
    def joined(self) -> str:
        """Title and text joined as the encoder sees them (as MTEB joins them)."""
        return join_title_text(self.title, self.text)


def _jsonl_documents(path: Path) -> list[Document]:
    docs = []
    for lineno, obj in iter_jsonl(path):
        rid = obj.get("_id", obj.get("id"))
        if isinstance(rid, int) and not isinstance(rid, bool):
            rid = str(rid)
        if not isinstance(rid, str) or not rid:
            raise DatasetError(f"{path}:{lineno}: missing or invalid '_id' (or 'id')")
        fields = []
        for name in ("title", "text"):
            value = obj.get(name) or ""
            if not isinstance(value, str):
                raise DatasetError(f"{path}:{lineno}: field {name!r} must be a string")
            fields.append(value)
        docs.append(Document(rid, fields[0], fields[1]))
    return docs


def _tsv_documents(path: Path) -> list[Document]:
    docs = []
    with open(path, encoding="utf-8", newline="") as fh:
        for lineno, row in enumerate(csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE), 1):
            if not row or not "".join(row).strip():
                continue
            if len(row) != 3 or not row[0]:
                raise DatasetError(f"{path}:{lineno}: expected id<TAB>title<TAB>text")
            if lineno == 1 and row == ["id", "title", "text"]:
                continue
            docs.append(Document(row[0], row[1], row[2]))
    return docs


def read_corpus(path: Path | str) -> list[Document]:
    """Read documents from JSONL (``_id`` or ``id``, ``title``, ``text``) or TSV.

    A file whose name ends in ``.tsv`` is ``id<TAB>title<TAB>text`` (an optional header row
    ``id title text``); anything else (``.jsonl``, ``.jsonl.gz``) is JSONL.

    Raises:
        DatasetError: naming the file and line of a malformed record, or a duplicate id.

    """
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"corpus file {path} does not exist")
    docs = _tsv_documents(path) if path.name.endswith(".tsv") else _jsonl_documents(path)
    check_new_documents(docs, set(), str(path))
    return docs


def read_queries(path: Path | str) -> list[str]:
    """Query texts from JSONL (``text`` field) or a plain text file (one query a line)."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"query file {path} does not exist")
    if path.name.endswith((".jsonl", ".jsonl.gz")):
        out = []
        for lineno, obj in iter_jsonl(path):
            text = obj.get("text")
            if not isinstance(text, str):
                raise DatasetError(f"{path}:{lineno}: missing string field 'text'")
            out.append(text)
        return [t for t in out if t.strip()]
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip()]


def check_new_documents(docs: Sequence[Document], existing: set[str], where: str) -> None:
    """Raise :class:`DatasetError` on an empty list or an id given twice or already indexed."""
    if not docs:
        raise DatasetError(f"{where}: no documents")
    seen: set[str] = set()
    for doc in docs:
        if doc.id in existing:
            raise DatasetError(f"{where}: document id {doc.id!r} is already in the index")
        if doc.id in seen:
            raise DatasetError(f"{where}: duplicate document id {doc.id!r}")
        seen.add(doc.id)


def sample_texts(texts: Sequence[str], n: int, seed: int = 0) -> list[str]:
    """A seeded sample of ``n`` distinct non-blank texts (all of them if fewer), in input order."""
    pool = list(dict.fromkeys(t for t in texts if t.strip()))
    if len(pool) <= n:
        return pool
    keep = sorted(random.Random(seed).sample(range(len(pool)), n))
    return [pool[i] for i in keep]


def pseudo_queries(docs: Sequence[Document], n: int, seed: int = 0) -> list[str]:
    """Stand-in queries for a corpus without any: the first sentence of sampled documents.

    Each is cut to :data:`PSEUDO_QUERY_WORDS` words; used for the recording pass and, when no
    real queries are given, as the reference sample of batch-statistics programs.
    """
    out = []
    for text in sample_texts([d.joined for d in docs], n, seed):
        first = (split_sentences(text) or [text])[0]
        out.append(" ".join(first.split()[:PSEUDO_QUERY_WORDS]))
    return out


# --- the manifest ----------------------------------------------------------------------------


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class EncoderIdentity(_Record):
    """The encoder an index was built with; loading with another is an error."""

    name: str
    model_id: str
    revision: str
    dim: int
    collapsed: bool

    @classmethod
    def of(cls, info: EncoderInfo) -> EncoderIdentity:
        """The identity of an encoder."""
        return cls(
            name=info.name,
            model_id=info.model_id,
            revision=info.revision,
            dim=info.dim,
            collapsed=info.collapsed,
        )

    def matches(self, info: EncoderInfo) -> bool:
        """True when ``info`` names the same weights and geometry."""
        return (self.model_id, self.revision, self.dim) == (info.model_id, info.revision, info.dim)

    def describe(self) -> str:
        """``name (model_id ..., revision ..., dim ...)``."""
        return (
            f"{self.name} (model_id {self.model_id!r}, revision {self.revision!r}, dim {self.dim})"
        )


class ProgramRecord(_Record):
    """The program the index serves, its version and its declared split (:mod:`.split`)."""

    name: str
    split: dict[str, Any]
    version: int = 1


class StoreRecord(_Record):
    """One store group: ``store/NN.npy`` and ``store/NN.jsonl``."""

    file: str
    view: str
    dim: int | None
    max_length: int | None
    rows: int


class ChunkRecord(_Record):
    """One declared artifact's table: ``chunks/NN.owner.npy`` and ``chunks/NN.rows.npy``."""

    file: str
    artifact: str
    group: int
    rows: int


class ReferenceRecord(_Record):
    """The reference query sample (``reference.npy``, ``reference.jsonl``)."""

    source: str
    count: int


class Bm25Record(_Record):
    """The stored BM25 index (``bm25/``); ``empty`` when the corpus has no token."""

    empty: bool
    k1: float
    b: float
    method: str


class Counts(_Record):
    """Sizes: documents, stored embeddings, texts encoded for the store, reference queries."""

    documents: int
    store_rows: int
    index_encodes: int
    reference_queries: int


class Observed(_Record):
    """What the recording pass saw the program do per sample query and per document."""

    sample_queries: int
    query_encodes_per_query: float
    index_encodes_per_document: float


class HistoryEntry(_Record):
    """One build or add."""

    action: Literal["build", "add"]
    documents: int
    at: str


class Manifest(_Record):
    """``manifest.json``: everything needed to check and load an index."""

    schema_version: Literal[1]
    embedding_ttc_version: str
    source: str
    encoder: EncoderIdentity
    program: ProgramRecord
    counts: Counts
    observed: Observed
    store: list[StoreRecord]
    chunks: list[ChunkRecord]
    reference: ReferenceRecord | None
    bm25: Bm25Record
    files: dict[str, FileEntry]
    history: list[HistoryEntry]


# --- files -----------------------------------------------------------------------------------


def _lock(out: Path) -> Any:
    """The lock of builds and additions of the index at ``out`` (``.NAME.lock`` beside it)."""
    return file_lock(out.with_name(f".{out.name}"))


def _load_array(root: Path, rel: str, dtype: type, shape: tuple[int | None, ...]) -> NDArray[Any]:
    path = root / rel
    try:
        arr: NDArray[Any] = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise IndexCorruptError(f"index file {path} is not a readable array ({exc})") from None
    want = tuple(arr.shape[i] if s is None else s for i, s in enumerate(shape))
    if arr.dtype != np.dtype(dtype) or arr.ndim != len(shape) or arr.shape != want:
        raise IndexCorruptError(
            f"index file {path} holds {arr.dtype} {arr.shape}, expected {np.dtype(dtype)} {want}"
        )
    return arr


def _read_lines(root: Path, rel: str) -> list[Any]:
    path = root / rel
    out = []
    with open(path, "rb") as fh:
        for lineno, line in enumerate(fh, 1):
            try:
                out.append(json.loads(line))
            except ValueError:
                raise IndexCorruptError(f"index file {path}:{lineno} is not JSON") from None
    return out


# --- building --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Recording:
    """The outcome of running the program over documents with a recording ``encode_fn``."""

    recorded: StoreBuilder
    index_encodes: int
    query_encodes: int
    calls: int


def _record(
    program_name: str,
    encoder: Encoder,
    doc_texts: Sequence[str],
    D: Matrix,
    queries: Sequence[str],
    store: EmbeddingStore,
    progress: Progress | None,
) -> _Recording:
    """Run the program over ``doc_texts`` in blocks and record its index-time encodes."""
    program = get_program(program_name)
    recorder = StoreBuilder()
    Q = encode_texts(encoder, list(queries), QUERY)
    index_encodes = query_encodes = calls = 0
    encoded = 0

    def advance(n: int) -> None:
        nonlocal encoded
        encoded += n
        if progress is not None:
            progress("encode index-time texts", encoded, 0)

    for start in range(0, len(doc_texts), BUILD_BLOCK):
        stop = min(start + BUILD_BLOCK, len(doc_texts))
        Db = np.asarray(D[start:stop], dtype=np.float32)
        enc = StoreEncodeFn(store, encoder, recorder, advance)
        ctx = Context(
            encode_fn=enc,
            query_texts=tuple(queries),
            doc_texts=tuple(doc_texts[start:stop]),
            query_ids=tuple(f"sample-{i}" for i in range(len(queries))),
            doc_ids=tuple(str(j) for j in range(start, stop)),
            views_collapsed=encoder.info.collapsed,
            index_time=enc.index_time,
        )
        S = Q @ Db.T
        check_output(program(Q, Db, S, ctx), S.shape, program.name)
        index_encodes += enc.stats.live_texts - enc.stats.query_texts
        query_encodes += enc.stats.query_texts
        calls += 1
        if progress is not None:
            progress("run the program over the documents", stop, len(doc_texts))
    return _Recording(recorder, index_encodes, query_encodes, calls)


RowsOf = Callable[[StoreKey, Sequence[str]], NDArray[np.intp]]
ChunkTable = tuple[str, StoreKey, NDArray[np.intp], NDArray[np.intp]]


def _chunk_tables(
    recipe: Recipe, collapsed: bool, doc_texts: Sequence[str], rows_of: RowsOf, doc_offset: int
) -> list[ChunkTable]:
    """Per declared artifact: its label, key, owner (document row) and store row per text.

    Raises:
        DeployError: when the recording did not produce a declared artifact (the recipe and
            the program disagree).

    """
    out = []
    for artifact in recipe.active_artifacts(collapsed):
        chunks = artifact.texts(doc_texts)
        rows = rows_of(artifact.key, chunks.texts)
        if (rows < 0).any():
            missing = int((rows < 0).sum())
            raise DeployError(
                f"the split of this program declares {artifact.describe()}, but the program "
                f"did not encode {missing} of its {len(rows)} texts at index time: the recipe "
                "the program declares (its recipe attribute) is out of date"
            )
        out.append((artifact.describe(), artifact.key, chunks.owner + doc_offset, rows))
    return out


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class _Group:
    """A store group of the new version: its rows, and the old version's file it extends."""

    key: StoreKey
    texts: list[str]
    parts: list[NDArray[np.float32]]  # row blocks of the embeddings
    old_file: Path | None = None  # e.g. OLD/store/03 (suffixes .npy and .jsonl)
    old_rows: int = 0


@dataclass(frozen=True)
class _Layout:
    """What a new index version holds, before it is written."""

    docs: Sequence[Document]
    documents: Sequence[NDArray[np.float32]]  # row blocks of D
    groups: list[_Group]
    chunks: list[ChunkTable]
    reference: tuple[list[str], NDArray[np.float32], str] | None
    old_docs: int = 0  # documents already in old/docs.jsonl


def _write_store(root: Path, groups: Sequence[_Group]) -> list[StoreRecord]:
    records = []
    for i, group in enumerate(groups):
        rel = f"store/{i:02d}"
        if group.old_file is not None and group.old_rows == len(group.texts):
            link_or_copy(group.old_file.with_suffix(".npy"), root / f"{rel}.npy")
            link_or_copy(group.old_file.with_suffix(".jsonl"), root / f"{rel}.jsonl")
        else:
            save_stacked(root / f"{rel}.npy", group.parts, group.parts[0].shape[1])
            prior = group.old_file.with_suffix(".jsonl") if group.old_file is not None else None
            write_lines(root / f"{rel}.jsonl", iter(group.texts[group.old_rows :]), prior)
        view, dim, max_length = group.key
        records.append(
            StoreRecord(file=rel, view=view, dim=dim, max_length=max_length, rows=len(group.texts))
        )
    return records


def _write(
    root: Path, layout: _Layout, *, encoder: EncoderInfo, old: Path | None, fields: dict[str, Any]
) -> Manifest:
    """Write every file of ``layout`` into ``root`` (unchanged files of ``old`` are linked)."""
    save_stacked(root / DOCUMENTS, layout.documents, encoder.dim)
    new_docs = layout.docs[layout.old_docs :]
    write_lines(
        root / DOCS,
        ({"id": d.id, "title": d.title, "text": d.text} for d in new_docs),
        old / DOCS if old is not None else None,
    )
    store = _write_store(root, layout.groups)
    keys = [g.key for g in layout.groups]
    chunks = []
    for i, (label, key, owner, rows) in enumerate(layout.chunks):
        rel = f"chunks/{i:02d}"
        save_array(root / f"{rel}.owner.npy", owner.astype(np.int64))
        save_array(root / f"{rel}.rows.npy", rows.astype(np.int64))
        chunks.append(
            ChunkRecord(file=rel, artifact=label, group=keys.index(key), rows=int(owner.size))
        )
    reference = None
    if layout.reference is not None:
        texts, emb, source = layout.reference
        if old is not None:
            link_or_copy(old / f"{REFERENCE}.npy", root / f"{REFERENCE}.npy")
            link_or_copy(old / f"{REFERENCE}.jsonl", root / f"{REFERENCE}.jsonl")
        else:
            save_array(root / f"{REFERENCE}.npy", emb.astype(np.float32))
            write_lines(root / f"{REFERENCE}.jsonl", iter(texts))
        reference = ReferenceRecord(source=source, count=len(texts))
    # Corpus-level statistics: always refitted over every document. The BM25 wrapper keeps
    # its bm25s index in ``_retriever`` (None for a corpus without a token).
    bm25 = BM25.fit([d.joined for d in layout.docs])
    if bm25._retriever is not None:
        bm25._retriever.save(str(root / BM25_DIR), show_progress=False)
    manifest = Manifest(
        schema_version=SCHEMA_VERSION,
        embedding_ttc_version=__version__,
        encoder=EncoderIdentity.of(encoder),
        store=store,
        chunks=chunks,
        reference=reference,
        bm25=Bm25Record(empty=bm25._retriever is None, k1=BM25_K1, b=BM25_B, method=BM25_METHOD),
        files=checksums(root, skip={MANIFEST}),
        **fields,
    )
    write_atomic(root / MANIFEST, manifest.model_dump_json(indent=2) + "\n")
    return manifest


# --- the index -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reference:
    """The reference query sample of a batch-statistics program."""

    texts: tuple[str, ...]
    embeddings: Embeddings


class Index:
    """A loaded index (read-only; :meth:`add` returns a new one).

    Attributes:
        directory: where it lives.
        manifest: its manifest.
        documents: ``D`` (memory-mapped), rows aligned with ``doc_ids``.
        doc_ids: document ids, in row order.
        doc_texts: title and text joined, in row order.
        store: the index-time embeddings the program's ``encode_fn`` is served from.
        reference: the reference query sample (batch-statistics programs), else ``None``.
        bm25: the corpus BM25 index (the BM25 first stage).

    """

    def __init__(
        self,
        directory: Path,
        manifest: Manifest,
        documents: Embeddings,
        docs: Sequence[Document],
        store: EmbeddingStore,
        reference: Reference | None,
        bm25: BM25,
    ) -> None:
        self.directory = directory
        self.manifest = manifest
        self.documents = documents
        self.docs = tuple(docs)
        self.doc_ids = tuple(d.id for d in docs)
        self.doc_texts = tuple(d.joined for d in docs)
        self.store = store
        self.reference = reference
        self.bm25 = bm25

    @property
    def program(self) -> str:
        """The program name the index serves."""
        return self.manifest.program.name

    @property
    def recipe(self) -> Recipe:
        """The program's deployment recipe."""
        return recipe_for(self.program)

    def __repr__(self) -> str:
        m = self.manifest
        return (
            f"Index({str(self.directory)!r}, program={m.program.name!r}, "
            f"encoder={m.encoder.name!r}, documents={m.counts.documents})"
        )

    def default_encoder(self, cache_dir: Path | str | None = None, cache: bool = True) -> Encoder:
        """The encoder the manifest names, in the on-disk embedding cache unless not ``cache``."""
        from embedding_ttc.encoders.cache import CachedEncoder
        from embedding_ttc.encoders.catalog import load_encoder

        encoder = load_encoder(self.manifest.encoder.name)
        return CachedEncoder(encoder, cache_dir) if cache else encoder

    def check_program(self) -> None:
        """Raise :class:`ProgramVersionError` unless the installed program is the index's version.

        A program's version rises when its scores change (for example BidirZScore's column
        statistics, version 2); the index's stored work and reference sample were made for the
        version in the manifest, so serving or extending it with another would mix the two.
        """
        built = self.manifest.program
        installed = program_version(get_program(built.name))
        if installed != built.version:
            raise ProgramVersionError(
                f"index {self.directory} was built with {built.name} version {built.version}, "
                f"but the installed {built.name} is version {installed}; rebuild the index"
            )

    def check_encoder(self, info: EncoderInfo) -> None:
        """Raise :class:`EncoderMismatchError` unless ``info`` is the index's encoder."""
        built = self.manifest.encoder
        if not built.matches(info):
            given = EncoderIdentity.of(info).describe()
            raise EncoderMismatchError(
                f"index {self.directory} was built with encoder {built.describe()}, but the "
                f"encoder given is {given}; load it with the encoder it was built with, or "
                "rebuild the index"
            )

    # --- loading ---------------------------------------------------------------------------

    @classmethod
    def load(cls, directory: Path | str, *, verify: bool = False) -> Index:
        """Open an index: check its manifest, files (sizes; SHA-256 with ``verify``), arrays.

        Raises:
            DeployError: no index there, or an unsupported schema version.
            IndexCorruptError: a file is missing, of the wrong size or checksum, or unreadable.

        """
        root = Path(directory)
        manifest = cls._manifest(root)
        check_files(
            root,
            manifest.files,
            verify=verify,
            error=IndexCorruptError,
            what="index file",
            remedy="rebuild the index",
        )
        n, dim = manifest.counts.documents, manifest.encoder.dim
        documents = _load_array(root, DOCUMENTS, np.float32, (n, dim))
        try:
            docs = [Document(**row) for row in _read_lines(root, DOCS)]
        except TypeError:
            raise IndexCorruptError(f"index file {root / DOCS} has a malformed record") from None
        if len(docs) != n:
            raise IndexCorruptError(f"index file {root / DOCS} has {len(docs)} documents, not {n}")
        groups = {}
        for rec in manifest.store:
            width = rec.dim or dim
            emb = _load_array(root, f"{rec.file}.npy", np.float32, (rec.rows, width))
            texts = _read_lines(root, f"{rec.file}.jsonl")
            if len(texts) != rec.rows:
                raise IndexCorruptError(f"index file {root / rec.file}.jsonl: wrong row count")
            groups[(rec.view, rec.dim, rec.max_length)] = StoreGroup.of(texts, emb)
        reference = None
        if manifest.reference is not None:
            r = manifest.reference.count
            emb = _load_array(root, f"{REFERENCE}.npy", np.float32, (r, dim))
            reference = Reference(tuple(_read_lines(root, f"{REFERENCE}.jsonl")), emb)
        return cls(
            root, manifest, documents, docs, EmbeddingStore(groups), reference, cls._bm25(root, n)
        )

    @staticmethod
    def _manifest(root: Path) -> Manifest:
        path = root / MANIFEST
        if not root.is_dir():
            raise DeployError(f"no index at {root}: not a directory")
        if not path.is_file():
            raise DeployError(
                f"{root} has no {MANIFEST}: not an index, or a build that did not finish"
            )
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise IndexCorruptError(f"index file {path} is not valid JSON ({exc})") from None
        version = raw.get("schema_version") if isinstance(raw, dict) else None
        if version != SCHEMA_VERSION:
            raise DeployError(
                f"{path}: schema_version {version!r} is not supported (this embedding-ttc "
                f"{__version__} reads version {SCHEMA_VERSION}); rebuild the index"
            )
        try:
            return Manifest.model_validate(raw)
        except ValidationError as exc:
            raise IndexCorruptError(f"index file {path} is malformed: {exc}") from None

    @staticmethod
    def _bm25(root: Path, n_docs: int) -> BM25:
        if not (root / BM25_DIR).is_dir():
            return BM25(n_docs=n_docs, _retriever=None)
        import bm25s

        try:
            retriever = bm25s.BM25.load(str(root / BM25_DIR), mmap=True, show_progress=False)
        except (ValueError, OSError, KeyError) as exc:
            folder = root / BM25_DIR
            raise IndexCorruptError(f"index folder {folder} is unreadable ({exc})") from None
        return BM25(n_docs=n_docs, _retriever=retriever)

    # --- building --------------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        out: Path | str,
        docs: Sequence[Document],
        *,
        encoder: Encoder,
        program: str,
        reference_queries: Sequence[str] = (),
        reference_source: str = "",
        source: str = "",
        replace: bool = False,
        progress: Progress | None = None,
    ) -> Index:
        """Build an index of ``docs`` for ``program`` with ``encoder`` at ``out``.

        Args:
            out: the index directory (must not exist unless ``replace``).
            docs: the corpus.
            encoder: the frozen encoder (usually cached).
            program: a program name of the catalog (parametrised names allowed).
            reference_queries: queries for the reference sample of a batch-statistics
                program (and the recording pass); pseudo-queries from the corpus if empty.
            reference_source: where they come from (recorded in the manifest).
            source: where the corpus comes from (recorded in the manifest).
            replace: replace an existing index at ``out``.
            progress: called with ``(stage, done, total)``.

        """
        out = Path(out)
        recipe = recipe_for(program)
        version = program_version(get_program(program))  # fail before encoding anything
        check_new_documents(docs, set(), source or "corpus")
        if not reference_queries:
            reference_queries = pseudo_queries(docs, DEFAULT_REFERENCE_SIZE)
            reference_source = (
                f"pseudo-queries: first sentence of {len(reference_queries)} sampled documents"
            )
        texts = [d.joined for d in docs]
        D = cls._encode_documents(encoder, texts, progress)
        queries = list(reference_queries[:SAMPLE_QUERIES])
        rec = _record(program, encoder, texts, D, queries, EmbeddingStore(), progress)
        groups = rec.recorded.groups()
        store = EmbeddingStore({k: StoreGroup.of(t, e) for k, (t, e) in groups.items()})
        reference = None
        if recipe.batch == "reference":
            ref_emb = encode_texts(encoder, list(reference_queries), QUERY)
            reference = (list(reference_queries), ref_emb, reference_source)
        layout = _Layout(
            docs=docs,
            documents=[D],
            groups=[_Group(k, t, [e]) for k, (t, e) in groups.items()],
            chunks=_chunk_tables(recipe, encoder.info.collapsed, texts, store.rows, 0),
            reference=reference,
        )
        fields = {
            "source": source,
            "program": ProgramRecord(
                name=program,
                split=recipe.describe(),
                version=version,
            ),
            "counts": Counts(
                documents=len(docs),
                store_rows=store.n_rows,
                index_encodes=rec.index_encodes,
                reference_queries=len(reference[0]) if reference else 0,
            ),
            "observed": Observed(
                sample_queries=len(queries),
                query_encodes_per_query=rec.query_encodes / max(1, rec.calls * len(queries)),
                index_encodes_per_document=rec.index_encodes / len(docs),
            ),
            "history": [HistoryEntry(action="build", documents=len(docs), at=_now())],
        }
        with _lock(out), staging_dir(out) as tmp:
            if progress is not None:
                progress("write", 0, 1)
            _write(tmp, layout, encoder=encoder.info, old=None, fields=fields)
            if out.exists() and not replace:  # checked under the lock, as late as can be
                raise DeployError(f"{out} already exists (pass --force to replace it)")
            publish_dir(tmp, out)
            if progress is not None:
                progress("write", 1, 1)
        return cls.load(out)

    @staticmethod
    def _encode_documents(
        encoder: Encoder, texts: Sequence[str], progress: Progress | None
    ) -> Embeddings:
        done = 0

        def advance(n: int) -> None:
            nonlocal done
            done += n
            if progress is not None:
                progress("encode documents", done, len(texts))

        return encode_texts(encoder, texts, PASSAGE, advance)

    def add(
        self,
        docs: Sequence[Document],
        *,
        encoder: Encoder | None = None,
        progress: Progress | None = None,
    ) -> Index:
        """Append documents without rebuilding; return the new index (same directory).

        Only the new documents are encoded (their ``D`` rows and the program's index-time
        encodes of them); corpus-level statistics (the BM25 index) are recomputed over all
        documents. The new version is written beside the old one and swapped in atomically;
        the old files are verified (SHA-256) first, and unchanged ones are hard-linked.

        Args:
            docs: the new documents.
            encoder: the index's encoder (default: :meth:`default_encoder`).
            progress: called with ``(stage, done, total)``.

        Raises:
            EncoderMismatchError: ``encoder`` is not the index's.
            DatasetError: no documents, or an id already indexed or given twice.

        """
        self.check_program()
        encoder = encoder if encoder is not None else self.default_encoder()
        self.check_encoder(encoder.info)
        with _lock(self.directory):
            current = Index.load(self.directory, verify=True)  # the version on disk now
            check_new_documents(docs, set(current.doc_ids), "new documents")
            return current._extend(docs, encoder, progress)

    def _extend(
        self, docs: Sequence[Document], encoder: Encoder, progress: Progress | None
    ) -> Index:
        texts = [d.joined for d in docs]
        D_new = self._encode_documents(encoder, texts, progress)
        queries = list(self.reference.texts[:SAMPLE_QUERIES]) if self.reference else []
        queries = queries or pseudo_queries(docs, SAMPLE_QUERIES)
        rec = _record(self.program, encoder, texts, D_new, queries, self.store, progress)
        fresh = rec.recorded.groups()
        groups: list[_Group] = []
        for record in self.manifest.store:
            key = (record.view, record.dim, record.max_length)
            old = self.store.groups[key]
            t_new, e_new = fresh.pop(key, ([], old.embeddings[:0]))
            groups.append(
                _Group(
                    key,
                    [*old.texts, *t_new],
                    [old.embeddings, e_new],
                    self.directory / record.file,
                    len(old.texts),
                )
            )
        groups += [_Group(key, t, [e]) for key, (t, e) in fresh.items()]
        lookup = {g.key: {t: i for i, t in enumerate(g.texts)} for g in groups}

        def rows_of(key: StoreKey, wanted: Sequence[str]) -> NDArray[np.intp]:
            seen = lookup.get(key, {})
            return np.array([seen.get(t, -1) for t in wanted], dtype=np.intp)

        collapsed = encoder.info.collapsed
        chunks = []
        for label, key, owner, rows in _chunk_tables(
            self.recipe, collapsed, texts, rows_of, len(self.doc_ids)
        ):
            prior = next((c for c in self.manifest.chunks if c.artifact == label), None)
            if prior is not None:
                base = self.directory / prior.file
                owner = np.concatenate([np.load(f"{base}.owner.npy"), owner])
                rows = np.concatenate([np.load(f"{base}.rows.npy"), rows])
            chunks.append((label, key, owner, rows))
        m = self.manifest
        reference = None
        if self.reference is not None and m.reference is not None:
            reference = (list(self.reference.texts), self.reference.embeddings, m.reference.source)
        all_docs = [*self.docs, *docs]
        layout = _Layout(
            all_docs, [self.documents, D_new], groups, chunks, reference, len(self.docs)
        )
        fields = {
            "source": m.source,
            "program": m.program,
            "counts": Counts(
                documents=len(all_docs),
                store_rows=sum(len(g.texts) for g in groups),
                index_encodes=m.counts.index_encodes + rec.index_encodes,
                reference_queries=m.counts.reference_queries,
            ),
            "observed": m.observed,
            "history": [*m.history, HistoryEntry(action="add", documents=len(docs), at=_now())],
        }
        with staging_dir(self.directory) as tmp:
            if progress is not None:
                progress("write", 0, 1)
            _write(tmp, layout, encoder=encoder.info, old=self.directory, fields=fields)
            publish_dir(tmp, self.directory)
            if progress is not None:
                progress("write", 1, 1)
        return Index.load(self.directory)
