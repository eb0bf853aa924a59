"""Building a deployed index, and adding documents to one: each writes a whole new version.

A build encodes the documents (``D``), runs the recording pass (:mod:`.record`) that keeps
the program's index-time encodes, encodes the reference query sample of a batch-statistics
program, and lays the result out as the files of :mod:`embedding_ttc.deploy.index`. An
addition encodes the new documents only, runs the recording pass over them against the
stored embeddings, and extends every store group, chunk table and ``docs.jsonl``; the BM25
index is refitted over all documents.

The program is a library program's name, whose recipe is the one it declares, or a program
file (:class:`~embedding_ttc.deploy.program_file.ProgramFile`), run in the sandbox, whose
recipe is derived after the recording pass (:mod:`.derive`, :mod:`.probe`) and written into
the manifest with its source. Every check of a program file (reading, static checks, a crash
in the recording pass or the probes, an index-time encode no index can store) happens
before anything is written, so a refused build leaves no directory behind. An addition to an
index of a program file runs its stored source and checks that the new documents are encoded
at index time as the derived recipe says.

Either way the version is written into a staged folder beside the index and published whole
(:mod:`embedding_ttc.durable.directories`); files an addition leaves unchanged are
hard-linked from the old version. Builds and additions of one index hold its lock
(``.NAME.lock`` beside it, :func:`index_lock`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from embedding_ttc import __version__
from embedding_ttc.deploy.corpus import Document, check_new_documents, pseudo_queries
from embedding_ttc.deploy.derive import check_addition, derived_program
from embedding_ttc.deploy.errors import DeployError
from embedding_ttc.deploy.manifest import (
    BM25_DIR,
    DOCS,
    DOCUMENTS,
    MANIFEST,
    REFERENCE,
    SCHEMA_VERSION,
    Bm25Record,
    ChunkRecord,
    Counts,
    EncoderIdentity,
    HistoryEntry,
    Manifest,
    Observed,
    ProgramRecord,
    ReferenceRecord,
    StoreRecord,
)
from embedding_ttc.deploy.program_file import ProgramFile
from embedding_ttc.deploy.record import ChunkTable, Progress, chunk_tables, record_encodes
from embedding_ttc.deploy.store import (
    EmbeddingStore,
    Reference,
    StoreGroup,
    StoreKey,
)
from embedding_ttc.durable import (
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
from embedding_ttc.evaluation.evaluate import encode_texts
from embedding_ttc.programs.base import Program, program_version
from embedding_ttc.programs.catalog import get_program, recipe_for
from embedding_ttc.programs.primitives.lexical import BM25, BM25_B, BM25_K1, BM25_METHOD
from embedding_ttc.programs.recipe import Recipe

DEFAULT_REFERENCE_SIZE = 64
"""Reference queries stored for batch-statistics programs (a shortlist batch's size)."""
SAMPLE_QUERIES = 4
"""Queries the recording pass runs the program with (only its index-time encodes are kept)."""


def index_lock(out: Path) -> Any:
    """The lock of builds and additions of the index at ``out`` (``.NAME.lock`` beside it)."""
    return file_lock(out.with_name(f".{out.name}"))


class IndexVersion(Protocol):
    """The version of an index on disk that an addition extends (a loaded Index is one)."""

    @property
    def directory(self) -> Path:
        """Where it lives."""
        ...

    @property
    def manifest(self) -> Manifest:
        """Its manifest."""
        ...

    @property
    def docs(self) -> tuple[Document, ...]:
        """Its documents, in row order."""
        ...

    @property
    def documents(self) -> Embeddings:
        """``D``, rows aligned with ``docs``."""
        ...

    @property
    def store(self) -> EmbeddingStore:
        """Its index-time embeddings."""
        ...

    @property
    def reference(self) -> Reference | None:
        """Its reference query sample, if the program has one."""
        ...


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# --- a version's layout, written -------------------------------------------------------------


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


# --- build and extend ------------------------------------------------------------------------


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


def _publish(
    out: Path,
    layout: _Layout,
    *,
    encoder: EncoderInfo,
    old: Path | None,
    fields: dict[str, Any],
    replace: bool,
    progress: Progress | None,
) -> None:
    """Write ``layout`` into a staged folder beside ``out`` and publish it there whole."""
    with staging_dir(out) as tmp:
        if progress is not None:
            progress("write", 0, 1)
        _write(tmp, layout, encoder=encoder, old=old, fields=fields)
        if out.exists() and not replace:  # checked under the index's lock, as late as can be
            raise DeployError(f"{out} already exists (pass --force to replace it)")
        publish_dir(tmp, out)
        if progress is not None:
            progress("write", 1, 1)


def build_index(
    out: Path,
    docs: Sequence[Document],
    *,
    encoder: Encoder,
    program: str | ProgramFile,
    reference_queries: Sequence[str],
    reference_source: str,
    source: str,
    replace: bool,
    progress: Progress | None,
) -> None:
    """Build an index of ``docs`` at ``out`` (:meth:`~embedding_ttc.deploy.index.Index.build`)."""
    if isinstance(program, ProgramFile):
        runner: Program = program.sandboxed()
        version = 1
    else:
        recipe_for(program)  # an unknown name fails before anything is encoded
        runner = get_program(program)
        version = program_version(runner)
    check_new_documents(docs, set(), source or "corpus")
    if not reference_queries:
        reference_queries = pseudo_queries(docs, DEFAULT_REFERENCE_SIZE)
        reference_source = (
            f"pseudo-queries: first sentence of {len(reference_queries)} sampled documents"
        )
    texts = [d.joined for d in docs]
    D = _encode_documents(encoder, texts, progress)
    queries = list(reference_queries[:SAMPLE_QUERIES])
    rec = record_encodes(runner, encoder, texts, D, queries, EmbeddingStore(), progress)
    groups = rec.recorded.groups()
    store = EmbeddingStore({k: StoreGroup.of(t, e) for k, (t, e) in groups.items()})
    if isinstance(program, ProgramFile):
        recipe, record = derived_program(
            program, runner, encoder, docs, D, store, rec, queries, progress
        )
    else:
        recipe = recipe_for(program)
        record = ProgramRecord(name=program, split=recipe.describe(), version=version)
    reference = None
    if recipe.batch == "reference":
        ref_emb = encode_texts(encoder, list(reference_queries), QUERY)
        reference = (list(reference_queries), ref_emb, reference_source)
    layout = _Layout(
        docs=docs,
        documents=[D],
        groups=[_Group(k, t, [e]) for k, (t, e) in groups.items()],
        chunks=chunk_tables(recipe, encoder.info.collapsed, texts, store.rows, 0),
        reference=reference,
    )
    fields = {
        "source": source,
        "program": record,
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
    with index_lock(out):
        _publish(
            out, layout, encoder=encoder.info, old=None, fields=fields, replace=replace,
            progress=progress,
        )  # fmt: skip


def extend_index(
    current: IndexVersion,
    docs: Sequence[Document],
    encoder: Encoder,
    program: Program,
    recipe: Recipe,
    progress: Progress | None,
) -> None:
    """Write ``current`` with ``docs`` appended in its place (the caller holds its lock).

    ``program`` and ``recipe`` are the index's (:meth:`~embedding_ttc.deploy.index.Index.add`
    builds them from the manifest).
    """
    m = current.manifest
    texts = [d.joined for d in docs]
    D_new = _encode_documents(encoder, texts, progress)
    queries = list(current.reference.texts[:SAMPLE_QUERIES]) if current.reference else []
    queries = queries or pseudo_queries(docs, SAMPLE_QUERIES)
    rec = record_encodes(program, encoder, texts, D_new, queries, current.store, progress)
    fresh = rec.recorded.groups()
    groups: list[_Group] = []
    for record in m.store:
        key = (record.view, record.dim, record.max_length)
        old = current.store.groups[key]
        t_new, e_new = fresh.pop(key, ([], old.embeddings[:0]))
        groups.append(
            _Group(
                key,
                [*old.texts, *t_new],
                [old.embeddings, e_new],
                current.directory / record.file,
                len(old.texts),
            )
        )
    groups += [_Group(key, t, [e]) for key, (t, e) in fresh.items()]
    lookup = {g.key: {t: i for i, t in enumerate(g.texts)} for g in groups}

    def rows_of(key: StoreKey, wanted: Sequence[str]) -> NDArray[np.intp]:
        seen = lookup.get(key, {})
        return np.array([seen.get(t, -1) for t in wanted], dtype=np.intp)

    if m.program.discovered is not None:
        check_addition(recipe, texts, rec, rows_of, current.directory)
    chunks = []
    for label, key, owner, rows in chunk_tables(
        recipe, encoder.info.collapsed, texts, rows_of, len(current.docs)
    ):
        prior = next((c for c in m.chunks if c.artifact == label), None)
        if prior is not None:
            base = current.directory / prior.file
            owner = np.concatenate([np.load(f"{base}.owner.npy"), owner])
            rows = np.concatenate([np.load(f"{base}.rows.npy"), rows])
        chunks.append((label, key, owner, rows))
    reference = None
    if current.reference is not None and m.reference is not None:
        sample = current.reference
        reference = (list(sample.texts), sample.embeddings, m.reference.source)
    all_docs = [*current.docs, *docs]
    layout = _Layout(
        all_docs, [current.documents, D_new], groups, chunks, reference, len(current.docs)
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
    _publish(
        current.directory, layout, encoder=encoder.info, old=current.directory, fields=fields,
        replace=True, progress=progress,
    )  # fmt: skip
