"""The manifest of a deployed index (``manifest.json``): typed records, checked on load.

Every record forbids unknown fields and is frozen. The file names of the index layout
(:mod:`embedding_ttc.deploy.index`) are here too, since the manifest lists every file.

Schema 2 added :class:`DiscoveredRecord` (a program deployed from a search's program file: its
source, sha256, provenance and derived recipe) as ``program.discovered``. Schema 3 makes an
index a list of immutable segments (:class:`SegmentRecord`, each with its own files, store
groups, chunk tables, BM25 index and ANN index; :mod:`embedding_ttc.deploy.segment`). An index
of schema 1 or 2 (one directory holding everything) is read as one segment rooted at the index
directory (:class:`LegacyManifest`, converted on reading); it serves as before, and ``index
compact`` rewrites it in the schema-3 layout, which ``index add`` asks for first. An
embedding-ttc that reads older schemas only refuses a newer index with a message naming the
version, rather than calling a new field malformed.

``tokenizer`` (added within schema 3) names the tokenizer of the index's BM25 indexes and
text analyses (:mod:`embedding_ttc.programs.primitives.tokenizers`); :func:`check_tokenizer`
refuses to serve or extend an index under another. An older manifest names none: its index was
built with the tokenizer now called ``letters``, which gives ``unicode``'s tokens on ASCII
text; its lexical library programs raised their versions with the change (so such an index of
theirs refuses through the version check), and the check lets the others through.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from embedding_ttc import __version__
from embedding_ttc.deploy.errors import DeployError, IndexCorruptError, TokenizerMismatchError
from embedding_ttc.durable import FileEntry
from embedding_ttc.encoders.base import EncoderInfo
from embedding_ttc.programs.primitives.tokenizers import tokenizer_name
from embedding_ttc.programs.recipe import Artifact, BatchKind, Recipe

SCHEMA_VERSION: Literal[3] = 3
READABLE_SCHEMAS = (1, 2, 3)
"""Manifest versions this embedding-ttc reads (1 and 2: one segment at the index's root)."""
MANIFEST = "manifest.json"
SEGMENTS = "segments"
REFERENCE = "reference"
ANN_QUERIES = "ann-queries"
SPILL = "spill"
"""Name of the scratch folders of the embeddings a writer records (``.spill.tmp-*``)."""


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
    """The stored BM25 index (``bm25/``) of a schema-1 or 2 index; ``empty``: no token."""

    empty: bool
    k1: float
    b: float
    method: str


class Bm25Params(_Record):
    """The BM25 parameters every segment's ``bm25/`` index was fitted with."""

    k1: float
    b: float
    method: str


class Counts(_Record):
    """Sizes: documents, stored embeddings, texts encoded for the store, reference queries.

    ``ann_queries``: calibration queries of the ANN indexes kept at the root
    (``ann-queries.npy`` and ``.jsonl``; 0 in an index built before they were kept).
    """

    documents: int
    store_rows: int
    index_encodes: int
    reference_queries: int
    ann_queries: int = 0


class Observed(_Record):
    """What the recording pass saw the program do per sample query and per document."""

    sample_queries: int
    query_encodes_per_query: float
    index_encodes_per_document: float


class HistoryEntry(_Record):
    """One build, addition, compaction or re-indexing of the ANN (``ann``) of the index.

    ``documents``: those added, else those the index holds after it.
    """

    action: Literal["build", "add", "compact", "ann"]
    documents: int
    at: str


class AnnRecord(_Record):
    """A segment's approximate nearest-neighbour index (:mod:`embedding_ttc.deploy.ann`).

    Attributes:
        kind: ``ivf-pq4fs`` (FAISS ``IndexIVFPQFastScan``, 4-bit codes of two dimensions),
            ``ivf-sq8`` (``IndexIVFScalarQuantizer``, one byte a dimension) or ``ivf-flat``
            (``IndexIVFFlat``, float32), all over inner product.
        file: its file in the segment.
        nlist: inverted lists (k-means cells).
        nprobe: cells searched per query, chosen at write time for ``recall``.
        recall: recall@100 against the exact product, measured at write time.
        rescore: candidates fetched per result wanted, re-scored exactly from the segment's
            vectors (1: none, the index's scores are exact).
        calibration: what ``recall`` was measured on: ``queries`` (query-view embeddings of
            the index's calibration queries) or ``midpoints`` (of two documents; what an index
            written before calibration queries were kept used too).

    """

    kind: Literal["ivf-flat", "ivf-sq8", "ivf-pq4fs"]
    file: str
    nlist: int
    nprobe: int
    recall: float
    rescore: int = 1
    calibration: Literal["queries", "midpoints"] = "midpoints"


class SegmentRecord(_Record):
    """One immutable segment: ``segments/NAME/`` (``""``: the root of a schema-1 or 2 index).

    Attributes:
        name: its folder's name (six digits, rising with each segment written).
        documents: its documents (rows of the index, in segment order).
        store: its store groups (``store/NN.npy`` and ``.jsonl``).
        chunks: its chunk tables (owners are rows of this segment).
        bm25_empty: its documents have no token (no ``bm25/``).
        ann: its ANN index, or ``None`` (searched exactly).
        files: every file of the segment (paths relative to it), size and SHA-256.

    """

    name: str
    documents: int
    store: list[StoreRecord]
    chunks: list[ChunkRecord]
    bm25_empty: bool
    ann: AnnRecord | None
    files: dict[str, FileEntry]


class Manifest(_Record):
    """``manifest.json``: everything needed to check and load an index.

    ``files`` lists the index-level files (the reference sample); each segment lists its own.
    """

    schema_version: Literal[1, 2, 3] = SCHEMA_VERSION
    embedding_ttc_version: str
    source: str
    encoder: EncoderIdentity
    program: ProgramRecord
    counts: Counts
    observed: Observed
    reference: ReferenceRecord | None
    bm25: Bm25Params
    segments: list[SegmentRecord]
    files: dict[str, FileEntry]
    history: list[HistoryEntry]
    tokenizer: str | None = None

    @property
    def legacy(self) -> bool:
        """True for a schema-1 or 2 index (one segment at the root; compact to convert it)."""
        return self.schema_version < 3


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


def check_tokenizer(manifest: Manifest, root: Path) -> None:
    """Raise :class:`TokenizerMismatchError` unless the active tokenizer is the index's.

    The index's BM25 indexes and stored text analyses hold the tokens of the tokenizer it was
    built with; queries tokenised by another would match them wrongly, silently.
    """
    built, active = manifest.tokenizer, tokenizer_name()
    if built is not None and built != active:
        raise TokenizerMismatchError(
            f"index {root} was built with tokenizer {built!r}, but the active tokenizer is "
            f"{active!r}; use it with EMBEDDING_TTC_TOKENIZER={built} (or --tokenizer {built}), "
            "or rebuild the index"
        )


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
        if version in (1, 2):
            return LegacyManifest.model_validate(raw).upgraded()
        return Manifest.model_validate(raw)
    except ValidationError as exc:
        raise IndexCorruptError(f"index file {path} is malformed: {exc}") from None
