"""Ragged arrays: rows of varying length in one numpy array, and fast row gathering.

:class:`Ragged` is the CSR-like layout of the text analyses (an ``indptr`` and a ``values``
array); :func:`take_rows` and :func:`ragged_positions` gather rows of such arrays, memory-mapped
ones included (a deployed index's stored analyses and chunk rows).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray


def ragged_positions(starts: NDArray[np.int64], lengths: NDArray[np.int64]) -> NDArray[np.int64]:
    """``starts[i] .. starts[i] + lengths[i] - 1`` for every ``i``, concatenated."""
    ends = np.cumsum(lengths)
    total = int(ends[-1]) if ends.size else 0
    return np.repeat(starts - (ends - lengths), lengths) + np.arange(total, dtype=np.int64)


def take_rows(values: NDArray[Any], positions: NDArray[np.integer]) -> NDArray[Any]:
    """``values[positions]`` (rows of a 1-D or 2-D array) as a new plain array.

    ``np.take`` on the array under a memory map, skipping the subclass's fancy indexing; the
    rows of a C-contiguous 2-D array of 1, 2, 4 or 8 bytes a row (a pair of int32) are moved
    as one unsigned integer each, about 6 times faster than taking rows of two items.
    """
    array = np.asarray(values)
    if array.ndim == 2 and array.flags.c_contiguous:
        width = array.itemsize * array.shape[1]
        if width in (1, 2, 4, 8):
            words = array.view(np.dtype(f"u{width}")).reshape(-1)
            picked: NDArray[Any] = np.take(words, positions).view(array.dtype)
            return picked.reshape(-1, array.shape[1])
    return np.take(array, positions, axis=0)


@dataclass(frozen=True, eq=False)  # array fields have no boolean equality
class Ragged:
    """Rows of varying length in one array: row ``i`` is ``values[indptr[i]:indptr[i + 1]]``."""

    indptr: NDArray[np.int64]
    values: NDArray[Any]

    @classmethod
    def of(cls, rows: Sequence[NDArray[Any]], dtype: type, width: int | None) -> Ragged:
        """Stack ``rows`` (each ``(n_i,)`` or ``(n_i, width)``)."""
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum([len(r) for r in rows], out=indptr[1:])
        shape = (-1,) if width is None else (-1, width)
        if not rows:
            return cls(indptr, np.empty((0,) if width is None else (0, width), dtype=dtype))
        values: NDArray[Any] = np.concatenate(rows).astype(dtype, copy=False)
        return cls(indptr, values.reshape(shape))

    def __len__(self) -> int:
        return len(self.indptr) - 1

    def row(self, i: int) -> NDArray[Any]:
        """Row ``i``."""
        return self.values[int(self.indptr[i]) : int(self.indptr[i + 1])]

    def owners(self) -> NDArray[np.intp]:
        """The row of each value."""
        return np.repeat(np.arange(len(self), dtype=np.intp), np.diff(self.indptr))

    def take(self, rows: NDArray[np.intp]) -> Ragged:
        """The given rows, in the order given (a new array, not a view)."""
        rows = np.asarray(rows, dtype=np.intp)
        starts = self.indptr[rows]
        lengths = self.indptr[rows + 1] - starts
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        return Ragged(indptr, take_rows(self.values, ragged_positions(starts, lengths)))

    @classmethod
    def concatenate(cls, parts: Sequence[Ragged]) -> Ragged:
        """The rows of ``parts``, one after the other."""
        offsets = np.cumsum([0, *(int(p.indptr[-1]) for p in parts[:-1])])
        tails = [p.indptr[1:] + o for p, o in zip(parts, offsets, strict=True)]
        indptr = np.concatenate([np.zeros(1, np.int64), *tails])
        return cls(indptr.astype(np.int64), np.concatenate([np.asarray(p.values) for p in parts]))
