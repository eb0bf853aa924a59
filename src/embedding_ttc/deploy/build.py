"""Building a deployed index, adding documents to one, compacting one: each writes segments.

A build encodes the documents (``D``), runs the recording pass (:mod:`.record`) that keeps
the program's index-time encodes, encodes the reference query sample of a batch-statistics
program, and writes it all as the index's first segment (:mod:`.segment`) in a folder staged
beside the index and published whole (:mod:`embedding_ttc.durable.directories`). An addition
encodes the new documents only, runs the recording pass over them against the stored
embeddings, and writes them as ONE new segment (its own store rows, chunk tables, BM25 and ANN
indexes); then a new manifest listing it is written atomically. No existing file is rewritten
or re-read beyond its size. A compaction (:func:`compact_index`) merges every segment into one,
restoring corpus-wide BM25 statistics, publishes the manifest listing only it, and removes the
old segments.

The program is a library program's name, whose recipe is the one it declares, or a program
file (:class:`~embedding_ttc.program_files.program_file.ProgramFile`), run in the sandbox, whose
recipe is derived after the recording pass (:mod:`.derive`, :mod:`.probe`) and written into
the manifest with its source. Every check of a program file (reading, static checks, a crash
in the recording pass or the probes, an index-time encode no index can store) happens
before anything is written, so a refused build leaves no directory behind. An addition to an
index of a program file runs its stored source and checks that the new documents are encoded
at index time as the derived recipe says.

Builds, additions and compactions of one index hold its lock (``.NAME.lock`` beside it,
:func:`index_lock`); each starts by sweeping what an interrupted one left (:func:`sweep`).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from embedding_ttc import __version__
from embedding_ttc.deploy.ann import (
    CALIBRATION_QUERIES,
    DEFAULT_POLICY,
    AnnPolicy,
    stored_queries,
    wants_ann,
)
from embedding_ttc.deploy.corpus import Document, check_new_documents, pseudo_queries
from embedding_ttc.deploy.derive import check_addition, derived_program
from embedding_ttc.deploy.errors import DeployError
from embedding_ttc.deploy.manifest import (
    ANN_QUERIES,
    MANIFEST,
    REFERENCE,
    SCHEMA_VERSION,
    SEGMENTS,
    SPILL,
    Bm25Params,
    Counts,
    EncoderIdentity,
    HistoryEntry,
    Manifest,
    Observed,
    ReferenceRecord,
    SegmentRecord,
    check_tokenizer,
)
from embedding_ttc.deploy.program_file import deployable
from embedding_ttc.deploy.program_records import ProgramRecord
from embedding_ttc.deploy.recording import (
    Progress,
    chunk_tables,
    record_declared,
    record_encodes,
)
from embedding_ttc.deploy.segment import (
    Segment,
    SegmentContent,
    next_segment_name,
    publish_segment,
    segment_name,
    sweep,
    write_segment,
)
from embedding_ttc.deploy.store import (
    IndexEmbeddingStore,
    Reference,
    SegmentedStore,
    StoreGroup,
)
from embedding_ttc.durable import (
    FileEntry,
    file_lock,
    publish_dir,
    save_array,
    sha256_file,
    staging_dir,
    write_atomic,
    write_lines,
)
from embedding_ttc.encoders.base import PASSAGE, QUERY, Embeddings, Encoder
from embedding_ttc.encoders.encode import encode_texts
from embedding_ttc.program_files.program_file import ProgramFile
from embedding_ttc.programs.base import Program, program_version
from embedding_ttc.programs.catalog import get_program, recipe_for
from embedding_ttc.programs.primitives.lexical import BM25_B, BM25_K1, BM25_METHOD
from embedding_ttc.programs.primitives.tokenizers import tokenizer_name
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
    def store(self) -> SegmentedStore:
        """Its index-time embeddings, over its segments."""
        ...

    @property
    def reference(self) -> Reference | None:
        """Its reference query sample, if the program has one."""
        ...

    @property
    def segments(self) -> Sequence[Segment]:
        """Its segments, in row order."""
        ...


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# --- a manifest, written ---------------------------------------------------------------------


def _manifest(
    encoder: EncoderIdentity,
    segments: list[SegmentRecord],
    files: dict[str, Any],
    fields: dict[str, Any],
) -> Manifest:
    return Manifest(
        schema_version=SCHEMA_VERSION,
        embedding_ttc_version=__version__,
        encoder=encoder,
        bm25=Bm25Params(k1=BM25_K1, b=BM25_B, method=BM25_METHOD),
        segments=segments,
        files=files,
        tokenizer=tokenizer_name(),
        **fields,
    )


def file_entries(root: Path, rels: Sequence[str]) -> dict[str, FileEntry]:
    """The size and SHA-256 of each of ``rels`` (paths relative to ``root``)."""
    return {
        rel: FileEntry(bytes=(root / rel).stat().st_size, sha256=sha256_file(root / rel))
        for rel in rels
    }


def publish_manifest(root: Path, manifest: Manifest) -> None:
    """Replace the index's manifest atomically: the moment a new version becomes the index."""
    write_atomic(root / MANIFEST, manifest.model_dump_json(indent=2) + "\n")


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


def spill_dir(out: Path, inside: bool = False) -> AbstractContextManager[Path]:
    """A scratch folder for the embeddings a build or an addition records.

    A build's is beside ``out``; an addition's is ``inside`` the index ``out``.

    They are written there as they are recorded (LexicalHybridRRF over a million short
    documents records about six million), then copied into the segment's store files; the
    folder is removed when the writer ends. A killed build leaves ``.NAME.spill.tmp-*`` beside
    the index, as it leaves its staged ``.NAME.tmp-*``; a killed addition leaves
    ``.spill.tmp-*`` inside it, which the next writer sweeps (:func:`~.segment.sweep`).
    """
    return staging_dir(out / SPILL if inside else out.with_name(f"{out.name}.{SPILL}"))


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
    ann: AnnPolicy = DEFAULT_POLICY,
) -> None:
    """Build an index of ``docs`` at ``out`` (:meth:`~embedding_ttc.deploy.index.Index.build`)."""
    with spill_dir(out) as spill:
        declared: Recipe | None = None  # a program file's recipe is learnt from the recording
        if isinstance(program, ProgramFile):
            runner: Program = deployable(program).sandboxed()
            version = 1
        else:
            declared = recipe_for(program)  # an unknown name fails before anything is encoded
            runner = get_program(program)
            version = program_version(runner)
        check_new_documents(docs, set(), source or "corpus")
        # The ANN indexes' calibration queries: the real queries given, else pseudo-queries.
        probe_texts = list(reference_queries[:CALIBRATION_QUERIES])
        probe_texts = probe_texts or pseudo_queries(docs, CALIBRATION_QUERIES)
        if not reference_queries:
            reference_queries = pseudo_queries(docs, DEFAULT_REFERENCE_SIZE)
            reference_source = (
                f"pseudo-queries: first sentence of {len(reference_queries)} sampled documents"
            )
        texts = [d.joined for d in docs]
        D = _encode_documents(encoder, texts, progress)
        queries = list(reference_queries[:SAMPLE_QUERIES])
        if declared is None:
            rec = record_encodes(
                runner, encoder, texts, D, queries, IndexEmbeddingStore(), progress, spill
            )
        else:
            rec = record_declared(runner, declared, encoder, texts, D, queries, progress, spill)
        groups = rec.recorded.groups()
        store = IndexEmbeddingStore({k: StoreGroup.of(t, e) for k, (t, e) in groups.items()})
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
        probes = encode_texts(encoder, probe_texts, QUERY).astype(np.float32)
        content = SegmentContent(
            docs=docs,
            documents=[D],
            queries=probes,
            groups={k: (t, [e]) for k, (t, e) in groups.items()},
            chunks=chunk_tables(recipe, encoder.info.collapsed, texts, store.rows, 0),
            # A lexical program reads its candidates' text analyses from the index: a library
            # program through ctx.deployed, a program file through its served primitives.
            analyse=recipe.lexical,
        )
        del texts
        fields = {
            "source": source,
            "program": record,
            "counts": Counts(
                documents=len(docs),
                store_rows=store.n_rows,
                index_encodes=rec.index_encodes,
                reference_queries=len(reference[0]) if reference else 0,
                ann_queries=len(probe_texts),
            ),
            "observed": Observed(
                sample_queries=len(queries),
                query_encodes_per_query=rec.query_encodes / max(1, rec.calls * len(queries)),
                index_encodes_per_document=rec.index_encodes / len(docs),
            ),
            "history": [HistoryEntry(action="build", documents=len(docs), at=_now())],
        }
        dim = encoder.info.dim
        with index_lock(out), staging_dir(out) as tmp:
            if progress is not None:
                progress("write", 0, 1)
            name = segment_name(0)
            (tmp / SEGMENTS).mkdir()
            segment = write_segment(tmp / SEGMENTS / name, name, content, dim, ann)
            ref_record = None
            if reference is not None:
                ref_texts, ref_emb, ref_source = reference
                save_array(tmp / f"{REFERENCE}.npy", ref_emb.astype(np.float32))
                write_lines(tmp / f"{REFERENCE}.jsonl", iter(ref_texts))
                ref_record = ReferenceRecord(source=ref_source, count=len(ref_texts))
            save_array(tmp / f"{ANN_QUERIES}.npy", probes)
            write_lines(tmp / f"{ANN_QUERIES}.jsonl", iter(probe_texts))
            stems = [ANN_QUERIES, REFERENCE] if reference is not None else [ANN_QUERIES]
            files = file_entries(
                tmp, [f"{stem}.{ext}" for stem in stems for ext in ("npy", "jsonl")]
            )
            manifest = _manifest(
                EncoderIdentity.of(encoder.info),
                [segment],
                files,
                {**fields, "reference": ref_record},
            )
            publish_manifest(tmp, manifest)
            if out.exists() and not replace:  # checked under the index's lock, as late as can be
                raise DeployError(f"{out} already exists (pass --force to replace it)")
            publish_dir(tmp, out)
            if progress is not None:
                progress("write", 1, 1)


def extend_index(
    current: IndexVersion,
    docs: Sequence[Document],
    encoder: Encoder,
    program: Program,
    recipe: Recipe,
    progress: Progress | None,
    ann: AnnPolicy = DEFAULT_POLICY,
) -> None:
    """Add ``docs`` to ``current`` as one new segment (the caller holds the index's lock).

    ``program`` and ``recipe`` are the index's (:meth:`~embedding_ttc.deploy.index.Index.add`
    builds them from the manifest). Index-time texts the earlier segments hold are served
    from them in the recording pass and copied into the new segment (which is then
    self-contained); only the others are encoded.
    """
    check_tokenizer(current.manifest, current.directory)
    sweep(current.directory, current.manifest)  # before this writer's own scratch folder
    with spill_dir(current.directory, inside=True) as spill:
        _extend_index(current, docs, encoder, program, recipe, progress, ann, spill)


def _extend_index(
    current: IndexVersion,
    docs: Sequence[Document],
    encoder: Encoder,
    program: Program,
    recipe: Recipe,
    progress: Progress | None,
    ann: AnnPolicy,
    spill: Path,
) -> None:
    m = current.manifest
    root = current.directory
    texts = [d.joined for d in docs]
    D_new = _encode_documents(encoder, texts, progress)
    queries = list(current.reference.texts[:SAMPLE_QUERIES]) if current.reference else []
    queries = queries or pseudo_queries(docs, SAMPLE_QUERIES)
    rec = record_encodes(program, encoder, texts, D_new, queries, current.store, progress, spill)
    fresh = rec.recorded.groups()
    # The texts of the declared artifacts that earlier segments hold: copied, not re-encoded.
    for artifact in recipe.active_artifacts(encoder.info.collapsed):
        key = artifact.key
        have, emb = fresh.get(key, ([], np.zeros((0, key[1] or encoder.info.dim), np.float32)))
        seen = set(have)
        wanted = [t for t in dict.fromkeys(artifact.texts(texts).texts) if t not in seen]
        rows = current.store.rows(key, wanted)
        held = rows >= 0
        if held.any():
            copied = current.store.take(key, rows[held])
            fresh[key] = ([*have, *(t for t, h in zip(wanted, held, strict=True) if h)],
                          np.concatenate([emb, copied]))  # fmt: skip
    groups = {k: StoreGroup.of(t, e) for k, (t, e) in fresh.items()}
    own = IndexEmbeddingStore(groups)
    if m.program.discovered is not None:
        check_addition(recipe, texts, rec, own.rows, root)
    analysed = [s.analyses for s in current.segments]
    analyse = bool(analysed) and all(a is not None for a in analysed)
    probes = stored_queries(root, m)
    if probes is None and wants_ann(len(docs), ann):  # an index built before they were kept
        probes = encode_texts(encoder, pseudo_queries(docs, CALIBRATION_QUERIES), QUERY)
    content = SegmentContent(
        docs=docs,
        documents=[D_new],
        queries=probes,
        groups={k: (t, [e]) for k, (t, e) in fresh.items()},
        chunks=chunk_tables(recipe, encoder.info.collapsed, texts, own.rows, 0),
        # The new segment's analyses extend the last one's vocabulary: one id per token.
        analyse=analyse,
        vocabulary=analysed[-1].vocabulary if analyse and analysed[-1] is not None else None,
    )
    del texts
    if progress is not None:
        progress("write", 0, 1)
    segment = publish_segment(root, next_segment_name(root, m), content, encoder.info.dim, ann)
    fields = {
        "source": m.source,
        "program": m.program,
        "counts": Counts(
            documents=m.counts.documents + len(docs),
            store_rows=m.counts.store_rows + own.n_rows,
            index_encodes=m.counts.index_encodes + rec.index_encodes,
            reference_queries=m.counts.reference_queries,
            ann_queries=m.counts.ann_queries,
        ),
        "observed": m.observed,
        "reference": m.reference,
        "history": [*m.history, HistoryEntry(action="add", documents=len(docs), at=_now())],
    }
    publish_manifest(root, _manifest(m.encoder, [*m.segments, segment], m.files, fields))
    if progress is not None:
        progress("write", 1, 1)
