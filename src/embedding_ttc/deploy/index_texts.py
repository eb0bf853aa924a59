"""The texts of an index's documents as sequences, read from disk only when asked.

:class:`DocTexts` is every document's text by row (``Index.doc_texts``); :class:`RowTexts` the
texts of some rows, then of documents the index does not hold: a program call's
``ctx.doc_texts``, read on first use. Both read through the index's :class:`StoredTexts`
methods (:class:`~embedding_ttc.deploy.index.Index` is one).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol, overload

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.deploy.corpus import Document
from embedding_ttc.deploy.segment import Segment


class StoredTexts(Protocol):
    """What the text views read from an index: its ids, segments, documents and texts by row."""

    @property
    def doc_ids(self) -> tuple[str, ...]:
        """Document ids in row order."""
        ...

    @property
    def segments(self) -> tuple[Segment, ...]:
        """The segments, in row order."""
        ...

    def document(self, row: int) -> Document:
        """The document at ``row``."""
        ...

    def texts(self, rows: Sequence[int] | NDArray[np.intp]) -> list[str]:
        """The joined texts of ``rows``, in that order."""
        ...


class DocTexts(Sequence[str]):
    """The documents' texts (title and text joined) by row, read from disk when asked."""

    def __init__(self, index: StoredTexts) -> None:
        self._index = index

    def __len__(self) -> int:
        return len(self._index.doc_ids)

    @overload
    def __getitem__(self, row: int) -> str: ...
    @overload
    def __getitem__(self, row: slice) -> list[str]: ...
    def __getitem__(self, row: int | slice) -> str | list[str]:
        if isinstance(row, slice):
            return self._index.texts(np.arange(len(self))[row])
        n = len(self)
        if not -n <= row < n:
            raise IndexError(f"row {row} out of range for {n} documents")
        return self._index.document(row % n).joined

    def __iter__(self) -> Iterator[str]:
        for segment in self._index.segments:
            for doc in segment.documents_iter():
                yield doc.joined


class RowTexts(Sequence[str]):
    """The texts of some rows of an index, then of documents it does not hold, read on first use.

    A program call's ``ctx.doc_texts``: a program that never looks at its candidates' texts
    (P0, SoftCentroid, or one whose document-side work the index stored) does not pay for
    reading them from disk, about 30 ms a query at 1,000 candidates on this machine. The first
    access reads them all, once.
    """

    def __init__(
        self, index: StoredTexts, rows: NDArray[np.intp], extra: Sequence[str] = ()
    ) -> None:
        self._index = index
        self._rows = rows
        self._extra = tuple(extra)
        self._texts: tuple[str, ...] | None = None

    def _all(self) -> tuple[str, ...]:
        if self._texts is None:
            self._texts = (*self._index.texts(self._rows), *self._extra)
        return self._texts

    def __len__(self) -> int:
        return len(self._rows) + len(self._extra)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[str, ...]: ...
    def __getitem__(self, i: int | slice) -> str | tuple[str, ...]:
        return self._all()[i]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())
