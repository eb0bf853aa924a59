"""The manifest of schemas 1 and 2, read as a schema-3 manifest of one segment.

An index of schema 1 or 2 is one directory holding everything, every file listed at the top of
its manifest (:class:`LegacyManifest`). It is read as one segment rooted at the index directory
(:meth:`LegacyManifest.upgraded`) and serves as before; ``index compact`` rewrites it in the
schema-3 layout, which ``index add`` asks for first.
"""

from __future__ import annotations

from typing import Literal

from embedding_ttc.deploy.manifest import (
    REFERENCE,
    Bm25Params,
    ChunkRecord,
    Counts,
    EncoderIdentity,
    HistoryEntry,
    Manifest,
    Observed,
    ReferenceRecord,
    SegmentRecord,
    StoreRecord,
)
from embedding_ttc.deploy.manifest_base import ManifestRecord as _Record
from embedding_ttc.deploy.program_records import ProgramRecord
from embedding_ttc.durable import FileEntry


class Bm25Record(_Record):
    """The stored BM25 index (``bm25/``) of a schema-1 or 2 index; ``empty``: no token."""

    empty: bool
    k1: float
    b: float
    method: str


class LegacyManifest(_Record):
    """The manifest of schemas 1 and 2: one directory, every file listed at the top."""

    schema_version: Literal[1, 2]
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

    def upgraded(self) -> Manifest:
        """The same index as a :class:`Manifest` of one segment rooted at the index directory."""
        is_reference = [rel for rel in self.files if rel.startswith(f"{REFERENCE}.")]
        segment = SegmentRecord(
            name="",
            documents=self.counts.documents,
            store=self.store,
            chunks=self.chunks,
            bm25_empty=self.bm25.empty,
            ann=None,
            files={k: v for k, v in self.files.items() if k not in is_reference},
        )
        return Manifest(
            schema_version=self.schema_version,
            embedding_ttc_version=self.embedding_ttc_version,
            source=self.source,
            encoder=self.encoder,
            program=self.program,
            counts=self.counts,
            observed=self.observed,
            reference=self.reference,
            bm25=Bm25Params(k1=self.bm25.k1, b=self.bm25.b, method=self.bm25.method),
            segments=[segment],
            files={k: self.files[k] for k in is_reference},
            history=self.history,
        )
