"""The manifest of a deployed index (``manifest.json``): typed records, checked on load.

Every record forbids unknown fields and is frozen. The file names of the index layout
(:mod:`embedding_ttc.deploy.index`) are here too, since the manifest lists every file.

Schema 2 adds :class:`DiscoveredRecord` (a program deployed from a search's program file: its
source, sha256, provenance and derived recipe) as ``program.discovered``; a schema-1 manifest
is a schema-2 one without it and still loads (an addition to such an index writes schema 2).
An embedding-ttc that reads schema 1 only refuses a schema-2 index with a message naming the
version, rather than calling the new field malformed.
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
from embedding_ttc.programs.recipe import Artifact, BatchKind, Recipe

SCHEMA_VERSION: Literal[2] = 2
READABLE_SCHEMAS = (1, 2)
"""Manifest versions this embedding-ttc reads (schema 1: no discovered programs)."""
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


class ArtifactRecord(_Record):
    """One derived artifact (:class:`~embedding_ttc.programs.recipe.Artifact`), field by field."""

    unit: str
    view: str
    dim: int | None = None
    max_length: int | None = None
    max_per_doc: int | None


class RecipeRecord(_Record):
    """A derived recipe, stored field by field so that a loaded index can serve it.

    Its ``query_encodes`` were measured with the index's encoder, the only one it is served
    with, so they stand for both of the recipe's counts (distinct or collapsed views).
    """

    artifacts: list[ArtifactRecord]
    lexical: bool
    query_encodes: int
    batch: BatchKind
    note: str

    @classmethod
    def of(cls, recipe: Recipe) -> RecipeRecord:
        """The record of a derived recipe (its artifacts are never conditional)."""
        return cls(
            artifacts=[
                ArtifactRecord(
                    unit=a.unit,
                    view=a.view,
                    dim=a.dim,
                    max_length=a.max_length,
                    max_per_doc=a.max_per_doc,
                )
                for a in recipe.artifacts
            ],
            lexical=recipe.lexical,
            query_encodes=recipe.query_encodes,
            batch=recipe.batch,
            note=recipe.note,
        )

    def recipe(self) -> Recipe:
        """The :class:`~embedding_ttc.programs.recipe.Recipe` this record holds."""
        return Recipe(
            artifacts=tuple(
                Artifact(
                    a.unit, a.view, max_length=a.max_length, dim=a.dim, max_per_doc=a.max_per_doc
                )
                for a in self.artifacts
            ),
            lexical=self.lexical,
            query_encodes=self.query_encodes,
            query_encodes_collapsed=self.query_encodes,
            batch=self.batch,
            note=self.note,
        )


class BatchMeasurement(_Record):
    """How the batch dependence of a discovered program was measured at build time.

    Attributes:
        sample_queries: queries the probes ran with.
        candidates_per_query: candidates per query in the probes (each query's best by cosine).
        own_lists_moved: largest score change of a query scored with the other sample
            queries, each over its own candidates, against alone (``None``: not measured).
        shared_list_moved: the same with every query over one shared candidate list.
        tolerance: changes at most this large (times the scores' scale) count as none.
        answer: the batch kind chosen (:data:`~embedding_ttc.programs.recipe.BATCH_ANSWERS`).
        why: one sentence saying why.

    """

    sample_queries: int
    candidates_per_query: int
    own_lists_moved: float | None
    shared_list_moved: float | None
    tolerance: float
    answer: BatchKind
    why: str


class Provenance(_Record):
    """Where a discovered program comes from, as far as is known at build time.

    Attributes:
        file: the program file the index was built from.
        search_run: the search run directory holding it (``RUN/programs/ID.py`` beside
            ``RUN/ledger.jsonl``), if it is one.
        generation: its generation in that run's ledger.
        proposer: the proposer that wrote it, from the ledger.
        parent_id: the program it builds on (the ledger's, else the file's ``Parent:`` line).
        novelty: the file's ``Novelty:`` claim (else the ledger's).
        hypothesis: the file's ``Hypothesis:`` claim (else the ledger's).

    """

    file: str
    search_run: str | None = None
    generation: int | None = None
    proposer: str | None = None
    parent_id: str | None = None
    novelty: str = ""
    hypothesis: str = ""


class DiscoveredRecord(_Record):
    """A program deployed from a program file, not from the library.

    Attributes:
        source: the program file's text, as built (the index serves this copy; the file on
            disk may change or go away).
        sha256: of ``source`` in UTF-8; checked on load.
        provenance: where it comes from.
        recipe: the recipe derived at build time (:mod:`embedding_ttc.deploy.derive`).
        batch: how its batch kind was measured.

    """

    source: str
    sha256: str
    provenance: Provenance
    recipe: RecipeRecord
    batch: BatchMeasurement


class ProgramRecord(_Record):
    """The program the index serves, its version and its recipe (``split``, as described).

    ``discovered`` is set for a program built from a program file (``index build
    --program-file``); ``None`` for a library program, whose recipe is the one it declares.
    """

    name: str
    split: dict[str, Any]
    version: int = 1
    discovered: DiscoveredRecord | None = None


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

    schema_version: Literal[1, 2] = SCHEMA_VERSION
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
    if version not in READABLE_SCHEMAS:
        readable = " and ".join(str(v) for v in READABLE_SCHEMAS)
        raise DeployError(
            f"{path}: schema_version {version!r} is not supported (this embedding-ttc "
            f"{__version__} reads versions {readable}); rebuild the index"
        )
    try:
        return Manifest.model_validate(raw)
    except ValidationError as exc:
        raise IndexCorruptError(f"index file {path} is malformed: {exc}") from None
