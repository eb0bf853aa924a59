"""The manifest's records of the program an index serves, with a discovered program's provenance.

:class:`ProgramRecord` names the program, its version and its split; for a program deployed
from a program file (``index build --program-file``) it holds a :class:`DiscoveredRecord`: the
source as built, its sha256, where it comes from (:class:`Provenance`), the recipe derived at
build time (:class:`RecipeRecord`, :mod:`embedding_ttc.deploy.derive`) and how its batch kind
was measured (:class:`BatchMeasurement`). Schema 2 of the manifest added them.
"""

from __future__ import annotations

from typing import Any

from embedding_ttc.deploy.manifest_base import ManifestRecord as _Record
from embedding_ttc.programs.recipe import Artifact, BatchKind, Recipe


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
