"""How a program deploys: its recipe, declared by the program itself (``recipe`` attribute).

A deployed index (:mod:`embedding_ttc.deploy`) runs a program unchanged, its ``encode_fn``
served from stored embeddings. The index is filled at build time by running the program once
over the corpus and recording every encode made inside ``ctx.index_time()`` (the
document-side, amortisable work of :mod:`embedding_ttc.programs.base`); encodes outside it are
query-time work (the expansions of DiverseDualCtx and its successors depend on the query).

A :class:`Recipe` declares what that recording must produce (each an :class:`Artifact`,
checked at build time, and against the programs by a contract test), whether the program has
lexical channels, how many texts it encodes per query at query time, and how its statistics
over a batch are answered when it is deployed (:data:`BATCH_ANSWERS`). Every library program
carries one as its class attribute ``recipe``; :func:`recipe_of` reads it. A program found by
the search has none written: ``index build --program-file`` derives one from what the program
does at build time (:mod:`embedding_ttc.deploy.derive`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from embedding_ttc.encoders.base import check_view
from embedding_ttc.programs.primitives.channels import SPLITTERS
from embedding_ttc.programs.primitives.chunking import MAX_CHUNKS_PER_DOC, Chunks, chunk_documents

BatchKind = Literal["independent", "candidates", "reference"]

BATCH_ANSWERS: Mapping[BatchKind, str] = {
    "independent": (
        "a query's scores depend only on the query and its candidates; a batch of queries is "
        "one program call over the union of their candidates (each query masked to its own)"
    ),
    "candidates": (
        "statistics over the documents the program is handed (BM25 IDF and length, channel "
        "centroids) are taken over the query's own candidates, as in an evaluation "
        "shortlist; each query is one program call"
    ),
    "reference": (
        "per-document statistics over the batch of queries (column z-scores): the index "
        "stores a reference sample of queries (texts and retrieval.query embeddings); each "
        "live query is scored with the reference rows appended to its batch, over its own "
        "candidates, and the reference rows are then dropped, so a query's scores never "
        "depend on the other queries of a request"
    ),
}
"""How each kind of batch dependence is answered by a deployed program."""


@dataclass(frozen=True)
class Artifact:
    """One kind of document-side encode that the index precomputes.

    Attributes:
        unit: ``"document"`` (whole documents) or a granularity of
            :data:`~embedding_ttc.programs.primitives.channels.SPLITTERS` (``sentence``,
            ``pair``, ``paragraph``: the first ``max_per_doc`` chunks of each document).
        view: the view the texts are encoded under.
        max_length: the token budget (``None`` for the model's own).
        dim: the embedding width asked for (``None`` for the encoder's full dimension; a
            smaller one truncates, Matryoshka-style).
        unless_collapsed: the program skips this encode when the encoder's views collapse
            (it reuses ``D``).
        max_per_doc: chunks kept per document, the first ones (``MAX_CHUNKS_PER_DOC`` as the
            library keeps; ``None``: every one); ignored for whole documents.

    """

    unit: str
    view: str
    max_length: int | None = None
    unless_collapsed: bool = False
    dim: int | None = None
    max_per_doc: int | None = MAX_CHUNKS_PER_DOC

    def __post_init__(self) -> None:
        """Check the unit, the view and the width."""
        if self.unit != "document" and self.unit not in SPLITTERS:
            raise ValueError(f"unknown artifact unit {self.unit!r}")
        check_view(self.view)
        if self.dim is not None and self.dim < 1:
            raise ValueError(f"an artifact's dim is positive, got {self.dim}")
        if self.max_per_doc is not None and self.max_per_doc < 1:
            raise ValueError(f"an artifact's max_per_doc is positive, got {self.max_per_doc}")

    @property
    def key(self) -> tuple[str, int | None, int | None]:
        """``(view, dim, max_length)`` of its encodes (``dim`` ``None``: the full dimension)."""
        return (self.view, self.dim, self.max_length)

    def describe(self) -> str:
        """A short label, e.g. ``sentence@retrieval.passage`` or ``document@...[128 tok]``."""
        width = f"[{self.dim} dim]" if self.dim is not None else ""
        budget = f"[{self.max_length} tok]" if self.max_length is not None else ""
        cond = " (unless views collapse)" if self.unless_collapsed else ""
        cap = ""
        if self.unit != "document" and self.max_per_doc != MAX_CHUNKS_PER_DOC:
            cap = f" (first {self.max_per_doc} a document)" if self.max_per_doc else " (all)"
        return f"{self.unit}@{self.view}{width}{budget}{cap}{cond}"

    def texts(self, doc_texts: Sequence[str]) -> Chunks:
        """The texts this artifact encodes for ``doc_texts``, with the document of each."""
        if self.unit == "document":
            owner = np.arange(len(doc_texts), dtype=np.intp)
            return Chunks(texts=list(doc_texts), owner=owner, n_docs=len(doc_texts))
        return chunk_documents(doc_texts, SPLITTERS[self.unit], max_chunks_per_doc=self.max_per_doc)


@dataclass(frozen=True)
class Recipe:
    """How one program deploys.

    Attributes:
        artifacts: the document-side encodes the index precomputes (besides ``D``, the
            documents under ``retrieval.passage``, which every index stores).
        lexical: the program has lexical channels (BM25 and the like); their statistics are
            taken over the documents the program is handed, in evaluation and here alike.
        query_encodes: texts the program encodes per query at query time, besides the
            query's own ``retrieval.query`` embedding, for an encoder with distinct views.
        query_encodes_collapsed: the same for an encoder whose views collapse.
        batch: how the program's scores depend on the batch (see :data:`BATCH_ANSWERS`).
        note: what the query-time encodes are, if any.

    """

    artifacts: tuple[Artifact, ...] = ()
    lexical: bool = False
    query_encodes: int = 0
    query_encodes_collapsed: int = 0
    batch: BatchKind = "independent"
    note: str = ""

    @property
    def amortised(self) -> bool:
        """True when every encode besides the query's own embedding is index-time work."""
        return self.query_encodes == 0 and self.query_encodes_collapsed == 0

    def active_artifacts(self, collapsed: bool) -> tuple[Artifact, ...]:
        """The artifacts the program encodes for an encoder whose views do (not) collapse."""
        return tuple(a for a in self.artifacts if not (collapsed and a.unless_collapsed))

    def expected_query_encodes(self, collapsed: bool) -> int:
        """Query-time texts per query for an encoder whose views do (not) collapse."""
        return self.query_encodes_collapsed if collapsed else self.query_encodes

    def encodes_per_query(self) -> str:
        """Texts encoded per query at query time, the query's own embedding included.

        How ``programs`` and ``index build`` both say it: ``"1"`` for P0, ``"4 (3 if views
        collapse)"`` for a program whose count depends on the encoder's views.
        """
        text = str(1 + self.query_encodes)
        if self.query_encodes_collapsed != self.query_encodes:
            text += f" ({1 + self.query_encodes_collapsed} if views collapse)"
        return text

    def describe(self) -> dict[str, object]:
        """A JSON-ready summary (written into the index manifest)."""
        return {
            "artifacts": ["document@retrieval.passage", *(a.describe() for a in self.artifacts)],
            "lexical": self.lexical,
            "query_encodes": self.query_encodes,
            "query_encodes_collapsed": self.query_encodes_collapsed,
            "batch": self.batch,
            "batch_answer": BATCH_ANSWERS[self.batch],
            "note": self.note,
        }


def recipe_of(program: object) -> Recipe:
    """The ``recipe`` a program declares.

    Raises:
        TypeError: the program declares none (or something else under that name).

    """
    recipe = getattr(program, "recipe", None)
    if not isinstance(recipe, Recipe):
        name = getattr(program, "name", type(program).__name__)
        raise TypeError(f"program {name!r} declares no deployment recipe (a Recipe attribute)")
    return recipe
