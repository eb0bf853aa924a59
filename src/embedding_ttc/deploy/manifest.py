"""The manifest of a deployed index (``manifest.json``): typed records, checked on load.

Every record forbids unknown fields and is frozen
(:class:`~embedding_ttc.deploy.manifest_base.ManifestRecord`). The file names of the index
layout (:mod:`embedding_ttc.deploy.index`) are here too, since the manifest lists every file.
The records of the program it serves are in :mod:`embedding_ttc.deploy.program_records`.

``program.discovered`` (:class:`~embedding_ttc.deploy.program_records.DiscoveredRecord`) is a
program deployed from a search's program file: its source, sha256, provenance and derived
recipe. Schema 3 makes an index a list of immutable segments (:class:`SegmentRecord`, each with
its own files, store groups, chunk tables, BM25 index and ANN index;
:mod:`embedding_ttc.deploy.segment`). An index of schema 1 or 2 (one directory holding
everything, built before 0.1.0) is refused by
:func:`~embedding_ttc.deploy.manifest_reader.read_manifest`, naming its version: rebuild it.

``tokenizer`` (added within schema 3) names the tokenizer of the index's BM25 indexes and
text analyses (:mod:`embedding_ttc.programs.primitives.tokenizers`); :func:`check_tokenizer`
refuses to serve or extend an index under another. An older manifest names none: its index was
built with the tokenizer now called ``letters``, which gives ``unicode``'s tokens on ASCII
text; its lexical library programs raised their versions with the change (so such an index of
theirs refuses through the version check), and the check lets the others through.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from embedding_ttc.deploy.errors import TokenizerMismatchError
from embedding_ttc.deploy.manifest_base import ManifestRecord as _Record
from embedding_ttc.deploy.program_records import ProgramRecord
from embedding_ttc.durable import FileEntry
from embedding_ttc.encoders.base import EncoderInfo
from embedding_ttc.programs.primitives.tokenizers import tokenizer_name

SCHEMA_VERSION: Literal[3] = 3
MANIFEST = "manifest.json"
SEGMENTS = "segments"
REFERENCE = "reference"
ANN_QUERIES = "ann-queries"
SPILL = "spill"
"""Name of the scratch folders of the embeddings a writer records (``.spill.tmp-*``)."""


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
    """One immutable segment: ``segments/NAME/``.

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

    schema_version: Literal[3] = SCHEMA_VERSION
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
