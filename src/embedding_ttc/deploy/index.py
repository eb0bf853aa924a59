"""A deployed index: a manifest and a list of immutable segments, built once per program.

Layout::

    manifest.json          schema_version 3, encoder identity, program and its split (for a
                           program file also its source, sha256, provenance and derived
                           recipe), counts, the segments in order (each with its files' sizes
                           and SHA-256s), history
    reference.npy/.jsonl   the reference query sample of batch-statistics programs
    ann-queries.npy/.jsonl the queries the ANN indexes are calibrated on (:mod:`.ann`)
    segments/NNNNNN/       one segment per build, addition or compaction (:mod:`.segment`):
                           its documents' D rows, texts, store groups, chunk tables, BM25 and
                           ANN indexes

Loading presents the segments as one corpus: rows in segment order, ids and texts by row, the
store looked up segment by segment (:class:`~embedding_ttc.deploy.store.SegmentedStore`).
Arrays and texts are memory-mapped; only the ids (an id -> row table is built by the
reranker) and each segment's store texts are held in memory. The first stages search each
segment and merge by score (:mod:`.first_stage`).

A build (:mod:`.build`) writes the whole directory beside the target and renames it into
place; :meth:`Index.add` writes one new segment and then a new manifest (atomically), and
:meth:`Index.compact` merges every segment into one (:mod:`.compact`), and
:meth:`Index.reindex_ann` rewrites the segments' ANN indexes under a new policy with nothing
encoded (:mod:`.reindex`). An interrupted writer
leaves the old version loadable; what it left on disk is swept by the next writer. Loading
checks the schema version (:mod:`.manifest`; an index of another schema is refused) and
every listed file's size; ``verify=True`` also checks the SHA-256s.

The program an index serves is a library program, built from its name, or the source of a
program file stored in the manifest, checked again on load and run in the search's sandbox
(:mod:`embedding_ttc.deploy.program_file` says why): :meth:`Index.load_program`.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.deploy.ann import DEFAULT_POLICY, AnnPolicy
from embedding_ttc.deploy.arrays import load_array, read_lines
from embedding_ttc.deploy.build import build_index, extend_index, index_lock
from embedding_ttc.deploy.chunk_rows import IndexChunks
from embedding_ttc.deploy.compact import compact_index
from embedding_ttc.deploy.corpus import Document, check_new_documents
from embedding_ttc.deploy.errors import (
    EncoderMismatchError,
    IndexCorruptError,
    ProgramVersionError,
)
from embedding_ttc.deploy.index_texts import DocTexts
from embedding_ttc.deploy.manifest import (
    REFERENCE,
    EncoderIdentity,
    Manifest,
    check_tokenizer,
)
from embedding_ttc.deploy.manifest_reader import read_manifest
from embedding_ttc.deploy.program_file import stored_program
from embedding_ttc.deploy.recording import Progress
from embedding_ttc.deploy.reindex import reindex_ann
from embedding_ttc.deploy.segment import Segment
from embedding_ttc.deploy.store import Reference, SegmentedStore
from embedding_ttc.durable import check_files
from embedding_ttc.encoders.base import Encoder, EncoderInfo
from embedding_ttc.program_files.program_file import ProgramFile
from embedding_ttc.program_files.sandbox.limits import DEFAULT_LIMITS, SandboxLimits
from embedding_ttc.programs.base import Program, program_version
from embedding_ttc.programs.catalog import get_program, recipe_for
from embedding_ttc.programs.primitives.text_analysis import ChainedAnalyses, take_rows
from embedding_ttc.programs.recipe import Recipe


class Index:
    """A loaded index (read-only; :meth:`add` and :meth:`compact` return a new one).

    Attributes:
        directory: where it lives.
        manifest: its manifest.
        segments: its segments, in row order.
        doc_ids: document ids, in row order (over every segment).
        doc_texts: title and text joined, by row (read from disk when asked).
        store: the index-time embeddings the program's ``encode_fn`` is served from.
        reference: the reference query sample (batch-statistics programs), else ``None``.
        analyses: the documents' text analyses over every segment (an index of a lexical
            library program whose every segment holds them), else ``None``.
        chunks: the segments' chunk tables: each document's chunk embeddings by stored row.

    """

    def __init__(
        self,
        directory: Path,
        manifest: Manifest,
        segments: Sequence[Segment],
        reference: Reference | None,
    ) -> None:
        self.directory = directory
        self.manifest = manifest
        self.segments = tuple(segments)
        self.doc_ids: tuple[str, ...] = tuple(chain.from_iterable(s.table.ids for s in segments))
        self.starts = np.cumsum([0, *(s.size for s in segments)]).astype(np.intp)
        self.doc_texts = DocTexts(self)
        self.store = SegmentedStore(tuple(s.store for s in segments))
        self.reference = reference
        parts = [s.analyses for s in self.segments]
        self.analyses = (
            ChainedAnalyses([a for a in parts if a is not None])
            if parts and all(a is not None for a in parts)
            else None
        )
        self.chunks = IndexChunks(self.segments, self.starts)

    def __len__(self) -> int:
        return len(self.doc_ids)

    def locate(self, rows: NDArray[np.intp]) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
        """Each row's segment and its row in that segment."""
        rows = np.asarray(rows, dtype=np.intp)
        which = np.searchsorted(self.starts, rows, side="right") - 1
        return which, rows - self.starts[which]

    def vectors(self, rows: NDArray[np.intp]) -> NDArray[np.float32]:
        """The ``D`` rows of ``rows`` (float32, ``len(rows) x dim``), gathered from segments."""
        rows = np.asarray(rows, dtype=np.intp)
        which, local = self.locate(rows)
        if len(self.segments) == 1:
            return np.asarray(take_rows(self.segments[0].documents, local), dtype=np.float32)
        out = np.empty((rows.size, self.manifest.encoder.dim), dtype=np.float32)
        for i in np.unique(which):
            mask = which == i
            out[mask] = take_rows(self.segments[int(i)].documents, local[mask])
        return out

    def document(self, row: int) -> Document:
        """The document at ``row``, read from its segment."""
        which, local = self.locate(np.array([row]))
        return self.segments[int(which[0])].table.document(int(local[0]))

    def texts(self, rows: Sequence[int] | NDArray[np.intp]) -> list[str]:
        """The joined title and text of each of ``rows``, read from disk."""
        return [self.document(int(r)).joined for r in rows]

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
        check_tokenizer(self.manifest, self.directory)
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
        """Open an index: its manifest, then each segment (file sizes; SHA-256 with ``verify``).

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
        dim = manifest.encoder.dim
        segments = [Segment.open(root, rec, dim, verify=verify) for rec in manifest.segments]
        n = sum(s.size for s in segments)
        if n != manifest.counts.documents:
            raise IndexCorruptError(
                f"index {root}: its segments hold {n} documents, the manifest counts "
                f"{manifest.counts.documents}"
            )
        reference = None
        if manifest.reference is not None:
            r = manifest.reference.count
            emb = load_array(root / f"{REFERENCE}.npy", np.float32, (r, dim))
            reference = Reference(tuple(read_lines(root / f"{REFERENCE}.jsonl")), emb)
        return cls(root, manifest, segments, reference)

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
        ann: AnnPolicy = DEFAULT_POLICY,
    ) -> Index:
        """Build an index of ``docs`` for ``program`` with ``encoder`` at ``out``.

        Args:
            out: the index directory (must not exist unless ``replace``).
            docs: the corpus.
            encoder: the frozen encoder (usually cached).
            program: a program name of the catalog (parametrised names allowed), or a
                program file found by the search
                (:func:`~embedding_ttc.deploy.program_file.read_deployable`), whose recipe
                is derived and which is stored in the index and served in the sandbox.
            reference_queries: queries for the reference sample of a batch-statistics
                program (and the recording pass); pseudo-queries from the corpus if empty.
            reference_source: where they come from (recorded in the manifest).
            source: where the corpus comes from (recorded in the manifest).
            replace: replace an existing index at ``out``.
            progress: called with ``(stage, done, total)``.
            ann: when a segment gets an ANN index (:mod:`~embedding_ttc.deploy.ann`).

        Raises:
            DeployError: a program file crashed in the recording pass or the probes, or
                encodes at index time what no index can store (nothing is left at ``out``).

        """
        out = Path(out)
        build_index(
            out, docs, encoder=encoder, program=program, reference_queries=reference_queries,
            reference_source=reference_source, source=source, replace=replace,
            progress=progress, ann=ann,
        )  # fmt: skip
        return cls.load(out)

    def add(
        self,
        docs: Sequence[Document],
        *,
        encoder: Encoder | None = None,
        progress: Progress | None = None,
        ann: AnnPolicy = DEFAULT_POLICY,
    ) -> Index:
        """Append documents as one new segment; return the new index (same directory).

        Only the new documents are encoded (their ``D`` rows and the program's index-time
        encodes of them that no segment holds yet); their BM25 and ANN indexes cover them
        alone, so BM25 statistics are per segment until :meth:`compact`. No existing file is
        rewritten or re-read: the version on disk is loaded (file sizes checked), the new
        segment written beside it, and a new manifest listing it published atomically.

        Args:
            docs: the new documents.
            encoder: the index's encoder (default: :meth:`default_encoder`).
            progress: called with ``(stage, done, total)``.
            ann: when the new segment gets an ANN index.

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
            current = Index.load(self.directory)  # the version on disk now
            check_new_documents(docs, set(current.doc_ids), "new documents")
            extend_index(current, docs, encoder, program, current.recipe, progress, ann)
        return Index.load(self.directory)

    def compact(
        self, *, progress: Progress | None = None, ann: AnnPolicy = DEFAULT_POLICY
    ) -> Index:
        """Merge every segment into one (corpus-wide BM25 statistics); return the new index.

        Rows, ids and the program's scores of the documents do not change.
        """
        with index_lock(self.directory):
            current = Index.load(self.directory)
            if len(current.segments) == 1:
                return current  # nothing to merge
            compact_index(current.directory, current.manifest, current.segments, progress, ann)
        return Index.load(self.directory)

    def reindex_ann(
        self, *, progress: Progress | None = None, ann: AnnPolicy = DEFAULT_POLICY
    ) -> Index:
        """Rewrite every segment's ANN index under ``ann``; return the new index.

        Nothing is encoded and no other file changes (:mod:`~embedding_ttc.deploy.reindex`).
        """
        with index_lock(self.directory):
            current = Index.load(self.directory)
            reindex_ann(current.directory, current.manifest, current.segments, ann, progress)
        return Index.load(self.directory)
