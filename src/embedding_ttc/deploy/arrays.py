"""Reading an index's files back: memory-mapped arrays and JSON lines, checked as they load."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.deploy.errors import IndexCorruptError


def load_array(path: Path, dtype: type, shape: tuple[int | None, ...]) -> NDArray[Any]:
    """The array at ``path``, memory-mapped, of ``dtype`` and ``shape`` (``None``: any size).

    Raises:
        IndexCorruptError: not a readable array, or another dtype or shape.

    """
    try:
        arr: NDArray[Any] = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise IndexCorruptError(f"index file {path} is not a readable array ({exc})") from None
    want = tuple(arr.shape[i] if s is None else s for i, s in enumerate(shape))
    if arr.dtype != np.dtype(dtype) or arr.ndim != len(shape) or arr.shape != want:
        raise IndexCorruptError(
            f"index file {path} holds {arr.dtype} {arr.shape}, expected {np.dtype(dtype)} {want}"
        )
    return arr


def read_lines(path: Path) -> list[Any]:
    """One JSON value per line of ``path``.

    Raises:
        IndexCorruptError: a line is not JSON (the message names it).

    """
    out = []
    with open(path, "rb") as fh:
        for lineno, line in enumerate(fh, 1):
            try:
                out.append(json.loads(line))
            except ValueError:
                raise IndexCorruptError(f"index file {path}:{lineno} is not JSON") from None
    return out
