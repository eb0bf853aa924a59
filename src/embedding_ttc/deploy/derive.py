"""A discovered program's recipe, derived at build time rather than written by hand.

A library program declares its :class:`~embedding_ttc.programs.recipe.Recipe`; a program file
from the search (:mod:`embedding_ttc.deploy.program_file`) does not, so ``index build
--program-file`` derives each field from what the program does:

* **artifacts**, from the recording pass (:mod:`embedding_ttc.deploy.recording`): every text the
  program encoded inside ``ctx.index_time()`` was recorded under its key (view, dim,
  max_length). Per key, the texts must be one or more kinds of piece of *every* document
  (:data:`UNITS`: whole documents, then their first sentences, sentence pairs or
  paragraphs, split as the library splits them and kept up to one of the primitives' caps,
  :data:`CAPS`); each kind found is an artifact. Anything else (a query's text, the
  sentences of only some documents, a text cut in a way the library does not cut) depends
  on more than the documents, so no index could serve it, and the build stops with a
  :class:`~embedding_ttc.deploy.errors.DeployError` naming an example. When two kinds
  coincide on a corpus (documents of one paragraph are their own paragraph; documents of
  ten sentences keep them all under every cap), the first in :data:`UNITS` and
  :data:`CAPS` order is named; an addition whose documents tell them apart, and do not fit
  the named one, is refused ("rebuild the index") rather than served from a wrong table.
* **lexical**, from the source: the program reaches the lexical primitives
  (:mod:`embedding_ttc.programs.primitives.lexical`, or :data:`LEXICAL_ENTRY_POINTS`). A
  program that computes its own text statistics in numpy is not seen as lexical. The flag
  makes the batch kind at least ``candidates`` (:mod:`.probe` says why).
* **query-time encodes** and **batch dependence**, by measurement (:mod:`.probe`).

The derived recipe is written into the manifest field by field
(:class:`~embedding_ttc.deploy.program_records.RecipeRecord`), with the measurement it came from
(:func:`derived_program`). An addition to such an index checks that the new documents are
encoded at index time as the derived recipe says (:func:`check_addition`): the recipe was
derived from the documents of the build, and new ones may tell apart kinds of piece that
coincided on those.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.deploy.corpus import Document
from embedding_ttc.deploy.errors import DeployError
from embedding_ttc.deploy.probe import Measured, measure
from embedding_ttc.deploy.program_file import provenance
from embedding_ttc.deploy.program_records import (
    BatchMeasurement,
    DiscoveredRecord,
    ProgramRecord,
    RecipeRecord,
)
from embedding_ttc.deploy.recording import Progress, Recording, RowsOf
from embedding_ttc.deploy.store import IndexEmbeddingStore, StoreKey
from embedding_ttc.encoders.base import PASSAGE, Embeddings, Encoder
from embedding_ttc.program_files.checks.imports import import_aliases, qualified_name
from embedding_ttc.program_files.checks.source import ParsedProgram
from embedding_ttc.program_files.program_file import ProgramFile
from embedding_ttc.programs.base import Program
from embedding_ttc.programs.primitives.channels import MAX_PIECES_PER_DOC, SPLITTERS
from embedding_ttc.programs.primitives.chunking import MAX_CHUNKS_PER_DOC
from embedding_ttc.programs.recipe import Artifact, Recipe

UNITS: tuple[str, ...] = ("document", *SPLITTERS)
"""The kinds of piece an artifact can be, in the order a tie between them is named."""

CAPS: tuple[int | None, ...] = (MAX_CHUNKS_PER_DOC, MAX_PIECES_PER_DOC, None)
"""Pieces kept per document that the primitives use (``encode_chunks``' default, then
``chunk_scores``', then every piece), in the order a tie between them is named."""

LEXICAL_MODULE = "embedding_ttc.programs.primitives.lexical"
LEXICAL_ENTRY_POINTS: frozenset[str] = frozenset(
    {"embedding_ttc.programs.primitives.channels.bm25_scores"}
)
"""Primitives outside :data:`LEXICAL_MODULE` that compute a lexical channel (a contract test
checks that every primitive calling into that module is listed)."""


@dataclass(frozen=True)
class Derivation:
    """A derived recipe and the batch measurement it carries."""

    recipe: Recipe
    batch: BatchMeasurement


def _describe(key: StoreKey) -> str:
    view, dim, max_length = key
    width = f", dim {dim}" if dim is not None else ""
    budget = f", max_length {max_length}" if max_length is not None else ""
    return f"view {view}{width}{budget}"


def _key_order(key: StoreKey) -> tuple[str, int, int]:
    view, dim, max_length = key
    return (view, dim or 0, max_length or 0)


def _candidates() -> list[tuple[str, int | None]]:
    """Every ``(unit, cap)`` an artifact may be, in the order ties are named."""
    return [("document", None)] + [(u, c) for u in UNITS if u != "document" for c in CAPS]


def _pieces(unit: str, doc_texts: Sequence[str]) -> tuple[list[str], NDArray[np.intp]]:
    """Every piece of ``unit`` of every document, with its position in its document.

    A cap keeps the pieces of position below it (``chunk_documents`` keeps a prefix), so
    each unit is split once whatever the caps tried.
    """
    chunks = Artifact(unit, PASSAGE, max_per_doc=None).texts(doc_texts)
    rank = np.arange(len(chunks.texts), dtype=np.intp) - chunks.starts[chunks.owner]
    return list(chunks.texts), rank


def _covers(big: int | None, small: int | None) -> bool:
    """Whether keeping ``big`` pieces a document keeps every one of ``small`` (None: all)."""
    return big is None or (small is not None and small <= big)


def derive_artifacts(
    doc_texts: Sequence[str], recorded: Mapping[StoreKey, Sequence[str]]
) -> tuple[Artifact, ...]:
    """The artifacts that account for every recorded index-time text (module docstring).

    Per key, a kind of piece (unit and pieces kept per document, :data:`CAPS`) is an
    artifact when every document's pieces of that kind were recorded and they account for
    texts no artifact taken before does; of two taken for one unit, the one that keeps more
    pieces stays.

    Args:
        doc_texts: the documents of the recording pass.
        recorded: per key, the texts encoded inside ``ctx.index_time()``.

    Raises:
        DeployError: a key's texts are not pieces of every document of some kind.

    """
    split: dict[str, tuple[list[str], NDArray[np.intp]]] = {}
    out: list[Artifact] = []
    for key in sorted(recorded, key=_key_order):
        view, dim, max_length = key
        texts = set(recorded[key])
        explained: set[str] = set()
        taken: list[tuple[str, int | None]] = []
        for unit, cap in _candidates():
            if unit not in split:
                split[unit] = _pieces(unit, doc_texts)
            pieces, rank = split[unit]
            wanted = {t for t, r in zip(pieces, rank, strict=True) if cap is None or r < cap}
            if wanted <= texts and not wanted <= explained:
                taken.append((unit, cap))
                explained |= wanted
        left = sorted(texts - explained)
        if left:
            example = left[0] if len(left[0]) <= 80 else left[0][:77] + "..."
            raise DeployError(
                f"the program encodes at index time {len(left)} text(s) under "
                f"{_describe(key)} that no index can store, e.g. {example!r}: an index stores "
                "document-side work that depends on the documents alone, one kind of piece "
                "of every document (whole documents, or their first sentences, sentence "
                "pairs or paragraphs); encode texts that depend on the queries, or on some "
                "documents only, outside ctx.index_time()"
            )
        for unit, cap in taken:
            if any(u == unit and c != cap and _covers(c, cap) for u, c in taken):
                continue  # another artifact of this unit keeps these pieces and more
            artifact = Artifact(unit, view, max_length=max_length, dim=dim)
            out.append(artifact if unit == "document" else replace(artifact, max_per_doc=cap))
    return tuple(out)


def unexplained(
    artifacts: Sequence[Artifact],
    doc_texts: Sequence[str],
    recorded: Mapping[StoreKey, Sequence[str]],
) -> dict[StoreKey, list[str]]:
    """Recorded texts that none of ``artifacts`` produces for ``doc_texts`` (per key)."""
    out = {}
    for key, texts in recorded.items():
        made: set[str] = set()
        for artifact in artifacts:
            if artifact.key == key:
                made.update(artifact.texts(doc_texts).texts)
        left = sorted(set(texts) - made)
        if left:
            out[key] = left
    return out


def has_lexical_channels(parsed: ParsedProgram) -> bool:
    """Whether the program imports or names a lexical primitive (module docstring)."""
    aliases = import_aliases(parsed.tree)
    names: list[str | None] = list(aliases.values())
    for node in ast.walk(parsed.tree):
        if isinstance(node, ast.Name | ast.Attribute):
            names.append(qualified_name(node, aliases))
    return any(name is not None and _lexical(name) for name in names)


def _lexical(name: str) -> bool:
    return (
        name == LEXICAL_MODULE
        or name.startswith(LEXICAL_MODULE + ".")
        or any(name == e or name.startswith(e + ".") for e in LEXICAL_ENTRY_POINTS)
    )


def derive_recipe(artifacts: Sequence[Artifact], lexical: bool, measured: Measured) -> Derivation:
    """A program file's recipe: its artifacts, its lexical flag, what was measured.

    ``artifacts`` come from :func:`derive_artifacts`, ``lexical`` from
    :func:`has_lexical_channels`, ``measured`` from
    :func:`~embedding_ttc.deploy.probe.measure`.
    """
    lo, hi = measured.fewest_query_encodes, measured.query_encodes
    spread = f"{hi}" if lo == hi else f"{lo} to {hi} (the most is declared)"
    note = (
        f"derived at build time: {spread} texts encoded per sample query at query time; "
        f"batch: {measured.batch.why}"
    )
    recipe = Recipe(
        artifacts=tuple(artifacts),
        lexical=lexical,
        query_encodes=hi,
        query_encodes_collapsed=hi,
        batch=measured.batch.answer,
        note=note,
    )
    return Derivation(recipe, measured.batch)


def derived_program(
    file: ProgramFile,
    program: Program,
    encoder: Encoder,
    docs: Sequence[Document],
    D: Embeddings,
    store: IndexEmbeddingStore,
    rec: Recording,
    queries: Sequence[str],
    progress: Progress | None,
) -> tuple[Recipe, ProgramRecord]:
    """A program file's recipe, derived after its recording pass, and its manifest record.

    Raises:
        DeployError: no sample query, an index-time encode no index can store, or a failure
            of the program in the probes.

    """
    if not queries:
        raise DeployError(
            f"no sample query to measure program {file.name} with: the corpus has no "
            "non-blank document to draw pseudo-queries from; give reference queries"
        )
    texts = [d.joined for d in docs]
    recorded = {key: t for key, (t, _) in rec.recorded.groups().items()}
    artifacts = derive_artifacts(texts, recorded)  # before the probes: the clearer refusal
    if progress is not None:
        progress("measure the program", 0, 1)
    lexical = has_lexical_channels(file.checked())
    ids = [d.id for d in docs]
    measured = measure(program, encoder, store, texts, ids, D, queries, lexical=lexical)
    derived = derive_recipe(artifacts, lexical, measured)
    if progress is not None:
        progress("measure the program", 1, 1)
    record = ProgramRecord(
        name=file.name,
        split=derived.recipe.describe(),
        discovered=DiscoveredRecord(
            source=file.source,
            sha256=file.sha256,
            provenance=provenance(file),
            recipe=RecipeRecord.of(derived.recipe),
            batch=derived.batch,
        ),
    )
    return derived.recipe, record


def check_addition(
    recipe: Recipe, texts: Sequence[str], rec: Recording, rows_of: RowsOf, where: Path
) -> None:
    """Refuse an addition whose documents a derived recipe does not describe.

    Args:
        recipe: the index's derived recipe.
        texts: the new documents.
        rec: the recording pass over them.
        rows_of: each text's row in the new version's store groups (``-1``: absent).
        where: the index directory (for the message).

    Raises:
        DeployError: the new documents' index-time encodes are not the recipe's artifacts.

    """
    recorded = {key: t for key, (t, _) in rec.recorded.groups().items()}
    left = unexplained(recipe.artifacts, texts, recorded)
    missing = [
        a.describe() for a in recipe.artifacts if (rows_of(a.key, a.texts(texts).texts) < 0).any()
    ]
    if left or missing:
        what = (
            f"it encodes {sum(len(v) for v in left.values())} texts the recipe does not name"
            if left
            else f"it does not encode {', '.join(missing)} for them"
        )
        raise DeployError(
            f"index {where}: the program's recipe was derived from the documents it was "
            f"built with, and the new documents are encoded otherwise at index time ({what}); "
            "rebuild the index with every document"
        )
