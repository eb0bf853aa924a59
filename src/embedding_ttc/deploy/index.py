"""A deployed index: a versioned directory built once per (corpus, encoder, program).

Layout (every file but the manifest is listed in it with its size and SHA-256)::

    manifest.json        schema_version, encoder identity, program and its split (for a
                         program file also its source, sha256, provenance and derived
                         recipe), counts, files
    documents.npy        D, the documents under retrieval.passage (float32, |D| x dim)
    docs.jsonl           {"id", "title", "text"} per document, in row order
    store/NN.npy         index-time embeddings recorded from the program, one group per
    store/NN.jsonl         (view, dim, max_length); the texts of the rows, one JSON string a line
    chunks/NN.owner.npy  per declared artifact (the recipe): the document of each of its texts
    chunks/NN.rows.npy     and that text's row in its store group
    reference.npy/.jsonl the reference query sample of batch-statistics programs
    bm25/                the bm25s index of the corpus (its own save format), for the BM25
                         first stage; rebuilt over all documents by :meth:`Index.add`

Arrays are opened with ``mmap_mode="r"``. A build (:mod:`embedding_ttc.deploy.build`) writes
into a temporary directory beside the target (``.NAME.tmp-*``) and renames it into place at
the end, so an interrupted build leaves nothing that loads; :meth:`Index.add` writes a new
directory the same way and swaps it with the old one (``renameat2(RENAME_EXCHANGE)`` where
Linux offers it, else two renames). Loading checks the schema version
(:mod:`embedding_ttc.deploy.manifest`) and every file's size; ``verify=True`` also checks the
SHA-256s (a build computes them from the files it wrote).

The program an index serves is a library program, built from its name, or the source of a
program file stored in the manifest, checked again on load and run in the search's sandbox
(:mod:`embedding_ttc.deploy.program_file` says why): :meth:`Index.load_program`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.deploy.build import build_index, extend_index, index_lock
from embedding_ttc.deploy.corpus import Document, check_new_documents
from embedding_ttc.deploy.errors import (
    EncoderMismatchError,
    IndexCorruptError,
    ProgramVersionError,
)
from embedding_ttc.deploy.manifest import (
    BM25_DIR,
    DOCS,
    DOCUMENTS,
    REFERENCE,
    EncoderIdentity,
    Manifest,
    read_manifest,
)
from embedding_ttc.deploy.program_file import ProgramFile, stored_program
from embedding_ttc.deploy.record import Progress
from embedding_ttc.deploy.store import EmbeddingStore, Reference, StoreGroup
from embedding_ttc.durable import check_files
from embedding_ttc.encoders.base import Embeddings, Encoder, EncoderInfo
from embedding_ttc.programs.base import Program, program_version
from embedding_ttc.programs.catalog import get_program, recipe_for
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.recipe import Recipe
from embedding_ttc.search.sandbox.limits import DEFAULT_LIMITS, SandboxLimits


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
        """The program's deployment recipe (a program file's: the one derived at build time)."""
        discovered = self.manifest.program.discovered
        if discovered is not None:
            return discovered.recipe.recipe()
        return recipe_for(self.program)

    def load_program(self, limits: SandboxLimits = DEFAULT_LIMITS) -> Program:
        """The program the index serves, checked (:meth:`check_program`).

        A library program is built from its name and runs in-process; a program file's
        source, stored in the manifest, is run in the sandbox with ``limits`` on every call.
        """
        built = self.manifest.program
        if built.discovered is not None:
            return stored_program(built.name, built.discovered, self.directory, limits)
        self.check_program()
        return get_program(built.name)

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
        A program file's stored source is checked instead (its sha256 and the static checks:
        :class:`IndexCorruptError` or :class:`~embedding_ttc.deploy.errors.DeployError`).
        """
        built = self.manifest.program
        if built.discovered is not None:
            stored_program(built.name, built.discovered, self.directory)
            return
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
        manifest = read_manifest(root)
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
        program: str | ProgramFile,
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
            program: a program name of the catalog (parametrised names allowed), or a
                program file found by the search
                (:func:`~embedding_ttc.deploy.program_file.read_program_file`), whose recipe
                is derived and which is stored in the index and served in the sandbox.
            reference_queries: queries for the reference sample of a batch-statistics
                program (and the recording pass); pseudo-queries from the corpus if empty.
            reference_source: where they come from (recorded in the manifest).
            source: where the corpus comes from (recorded in the manifest).
            replace: replace an existing index at ``out``.
            progress: called with ``(stage, done, total)``.

        Raises:
            DeployError: a program file crashed in the recording pass or the probes, or
                encodes at index time what no index can store (nothing is left at ``out``).

        """
        out = Path(out)
        build_index(
            out, docs, encoder=encoder, program=program, reference_queries=reference_queries,
            reference_source=reference_source, source=source, replace=replace,
            progress=progress,
        )  # fmt: skip
        return cls.load(out)

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
            DeployError: the index serves a program file whose derived recipe does not
                describe what it encodes for the new documents (rebuild the index).

        """
        program = self.load_program()
        encoder = encoder if encoder is not None else self.default_encoder()
        self.check_encoder(encoder.info)
        with index_lock(self.directory):
            current = Index.load(self.directory, verify=True)  # the version on disk now
            check_new_documents(docs, set(current.doc_ids), "new documents")
            extend_index(current, docs, encoder, program, current.recipe, progress)
            return Index.load(self.directory)


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
