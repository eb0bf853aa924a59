"""Documents whose holder serves the primitives over them: a served program file's texts.

A protocol of its own module, which imports nothing of the package, so that the primitives
that look for it (:mod:`~embedding_ttc.programs.text.bm25`,
:mod:`~embedding_ttc.programs.primitives.chunking`) and the sandbox that implements it depend
on it alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray


@runtime_checkable
class ServedTexts(Protocol):
    """Documents' texts whose holder serves the primitives over them from work done ahead.

    A deployed program file's ``ctx.doc_texts`` in the sandbox's child is one
    (:mod:`~embedding_ttc.program_files.sandbox.child`): the parent holds the call's
    :class:`~embedding_ttc.programs.base.DeployedInputs` (a deployed index's stored text
    analyses and embeddings) or computes the same values from the texts. The primitives a
    program file calls look for it behind their usual signatures, so a program file never
    reads ``ctx.deployed`` and yet its ``BM25.fit(ctx.doc_texts)`` and
    ``chunk_documents(ctx.doc_texts, split_paragraphs)`` draw on what the index stores
    (:meth:`~embedding_ttc.programs.text.bm25.BM25.fit`,
    :func:`~embedding_ttc.programs.primitives.chunking.chunk_documents`). Each method returns
    exactly what the primitive computes from the texts themselves.
    """

    def __len__(self) -> int:
        """The number of documents."""
        ...

    def bm25_scores(self, query_texts: Sequence[str]) -> NDArray[np.float32]:
        """``BM25.fit(texts).scores(query_texts)``: ``float32``, one row per query."""
        ...

    def served_chunks(
        self, granularity: str, max_per_doc: int | None
    ) -> tuple[NDArray[np.intp], Sequence[str]]:
        """The owners and texts of ``chunk_documents(texts, splitter, max_chunks_per_doc=...)``.

        ``granularity`` is ``sentence``
        (:func:`~embedding_ttc.programs.primitives.chunking.split_sentences`) or ``paragraph``
        (:func:`~embedding_ttc.programs.primitives.chunking.split_paragraphs`).
        """
        ...
