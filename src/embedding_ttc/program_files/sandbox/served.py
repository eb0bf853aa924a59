"""What the sandbox's parent serves a child's primitives from: one call's documents and their work.

A program file cannot read ``ctx.deployed`` (the static checks reject it), yet when it is
served its primitives should cost what a library program's do. So the child's
``ctx.doc_texts`` is a :class:`~embedding_ttc.programs.served_texts.ServedTexts` when the call is a
deployed one (the parent's context carries :class:`~embedding_ttc.programs.base.DeployedInputs`),
and the primitives a program file calls over it ask the parent, which answers from the
deployed inputs, with the values the primitives compute from the texts:

* ``BM25.fit(ctx.doc_texts).scores(queries)``: from the index's stored text analyses of the
  call's columns (:func:`~embedding_ttc.programs.text.bm25.bm25_analysed`,
  held equal to ``bm25s`` bit for bit), else fitted once per call in the parent;
* ``chunk_documents(ctx.doc_texts, split_sentences | split_paragraphs, ...)``: cut from the
  stored sentence and paragraph spans (:meth:`~embedding_ttc.programs.text.analyses.
  TextAnalyses.chunks`), else split here; only the owners go to the child, the texts if read;
* ``ctx.encode_fn(chunks.texts | ctx.doc_texts, view)``: the child names the texts instead of
  sending them, and the index's chunk tables serve their embeddings by stored row
  (:class:`~embedding_ttc.programs.base.StoredEmbeddingSource`), else the parent's
  ``encode_fn`` encodes the same texts, as it would have encoded the child's copy.

An undeployed call (an evaluation, the search) serves the texts only: its child computes
every primitive itself, as it always has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.programs.base import Context, DeployedInputs, Matrix
from embedding_ttc.programs.primitives.chunking import (
    SERVED_GRANULARITIES,
    Chunks,
    chunk_documents,
)
from embedding_ttc.programs.primitives.text_analysis import analyses_of
from embedding_ttc.programs.text.bm25 import BM25, bm25_analysed

DOCUMENT = "document"
"""The unit naming the call's documents themselves."""

SPLITTER_OF = {granularity: splitter for splitter, granularity in SERVED_GRANULARITIES.items()}
"""The splitter of each granularity served."""


class ServedInputs:
    """One call's documents as the parent serves them to its child (see the module docstring).

    Args:
        ctx: the parent's context of the call.

    """

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.deployed = ctx.deployed is not None
        self._chunks: dict[tuple[str, int | None], Chunks] = {}
        self._bm25: BM25 | None = None

    def texts(self, unit: Mapping[str, Any]) -> Sequence[str]:
        """The texts a unit names: the documents, or their chunks at a granularity.

        Raises:
            ValueError: a unit that is not one of those served.

        """
        name = unit.get("unit")
        if name == DOCUMENT and set(unit) == {"unit"}:
            return self.ctx.doc_texts
        return self.chunks(name, unit.get("max_per_doc")).texts

    def chunks(self, granularity: object, max_per_doc: object) -> Chunks:
        """``chunk_documents`` of the call's documents at ``granularity`` (once per call).

        From the stored spans when the call has text analyses (the same chunks, the analyses'
        contract), else split here.

        Raises:
            ValueError: an unknown granularity or a bad ``max_per_doc``.

        """
        if not isinstance(granularity, str) or granularity not in SPLITTER_OF:
            raise ValueError(f"no chunks of unit {granularity!r} are served")
        if max_per_doc is not None and (
            type(max_per_doc) is not int or max_per_doc < 1  # a bool is not a count
        ):
            raise ValueError(f"max_per_doc must be a positive int or None, got {max_per_doc!r}")
        key = (granularity, max_per_doc)
        found = self._chunks.get(key)
        if found is None:
            ctx = self.ctx
            if DeployedInputs.of(ctx).text_analyses is not None:
                found = analyses_of(ctx).chunks(ctx.doc_texts, granularity, max_per_doc)
            else:
                splitter = SPLITTER_OF[granularity]
                found = chunk_documents(
                    tuple(ctx.doc_texts), splitter, max_chunks_per_doc=max_per_doc
                )
            self._chunks[key] = found
        return found

    def bm25(self, query_texts: Sequence[str]) -> Matrix:
        """``BM25.fit(doc_texts).scores(query_texts)`` of the call's documents.

        From the stored analyses when the call has them, else fitted here once per call.
        """
        ctx = self.ctx
        if DeployedInputs.of(ctx).text_analyses is not None:
            return bm25_analysed(query_texts, analyses_of(ctx))
        if self._bm25 is None:
            self._bm25 = BM25.fit(tuple(ctx.doc_texts))
        return self._bm25.scores(query_texts)

    def stored(self, unit: Mapping[str, Any], options: Mapping[str, Any]) -> Matrix | None:
        """The stored embeddings of the texts ``unit`` names under ``options``, or ``None``.

        ``None`` when the call has no stored embeddings of that encode (the caller then
        encodes the texts): an encode at a ``dim``, or without an explicit view, is not looked
        up.

        Raises:
            ValueError: the stored rows are not one per text of the unit (a corrupt index).

        """
        source = DeployedInputs.of(self.ctx).stored_embeddings
        view = options.get("view")
        if source is None or not isinstance(view, str) or options.get("dim") is not None:
            return None
        max_length = options.get("max_length")
        name = str(unit.get("unit"))
        max_per_doc = None if name == DOCUMENT else unit.get("max_per_doc")
        found = source.embeddings(name, view, max_length, max_per_doc)
        if found is None:
            return None
        owner, emb = found
        n_docs = len(self.ctx.doc_texts)
        want: NDArray[np.intp] = (
            np.arange(n_docs, dtype=np.intp)
            if name == DOCUMENT
            else self.chunks(name, max_per_doc).owner
        )
        if not np.array_equal(np.asarray(owner), want):
            raise ValueError(f"the stored {name} embeddings are not one per text of the call")
        return np.asarray(emb, dtype=np.float32)
