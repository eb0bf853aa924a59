"""The manifest of a deployed index (``manifest.json``): typed records, checked on load.

Every record forbids unknown fields and is frozen. The file names of the index layout
(:mod:`embedding_ttc.deploy.index`) are here too, since the manifest lists every file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from embedding_ttc import __version__
from embedding_ttc.deploy.errors import DeployError, IndexCorruptError
from embedding_ttc.durable import FileEntry
from embedding_ttc.encoders.base import EncoderInfo

SCHEMA_VERSION: Literal[1] = 1
MANIFEST = "manifest.json"
DOCUMENTS = "documents.npy"
DOCS = "docs.jsonl"
REFERENCE = "reference"
BM25_DIR = "bm25"


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

    schema_version: Literal[1] = SCHEMA_VERSION
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


def read_manifest(root: Path) -> Manifest:
    """The manifest of the index at ``root``, checked against this version's schema.

    Raises:
        DeployError: no index there (no folder, or no manifest: a build that did not finish),
            or an unsupported schema version.
        IndexCorruptError: the manifest is not JSON or not a valid manifest.

    """
    path = root / MANIFEST
    if not root.is_dir():
        raise DeployError(f"no index at {root}: not a directory")
    if not path.is_file():
        raise DeployError(f"{root} has no {MANIFEST}: not an index, or a build that did not finish")
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
