"""Durable files: whole files replaced atomically, and the fsynced writers of staged folders.

A kill at any moment leaves either the old file or the new one, never half of one:

* :func:`replacing` hands out a temporary path beside the target, unique to this process and
  call (so two processes, or two threads, writing the same file never share one), and renames
  it over the target when the block ends without error: fsynced first, the directory after,
  unless the caller opts out (the embedding cache, whose entries carry their own digest, does:
  a torn entry is a miss, not an error, and it writes hundreds of thousands of them).
* :func:`write_atomic` is the one-call form for data already in memory.
* :func:`save_array`, :func:`save_stacked` and :func:`write_lines` write files that are not
  yet visible (inside a staged folder, :mod:`~embedding_ttc.durable.directories`), flushed
  and fsynced before the folder is published.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.lib.format import open_memmap
from numpy.typing import NDArray

_SERIAL = itertools.count()  # next() is atomic under the GIL: one name per call, any thread
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)  # O_BINARY: Windows
_BLOCK = 1 << 20


def fsync_dir(path: Path) -> None:
    """Make a rename or a new file in directory ``path`` durable (where the platform can)."""
    with contextlib.suppress(OSError):  # not every platform can open a directory
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def fsync_file(path: Path) -> None:
    """Flush a file written by someone else's code (an exporter, an extractor) to the disk."""
    fd = os.open(path, os.O_RDWR)  # not read-only: Windows flushes only a writable handle
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_tree(root: Path) -> None:
    """Fsync every file below ``root``, then every directory, deepest first."""
    folders = [root]
    for path in sorted(root.rglob("*")):
        if path.is_dir():
            folders.append(path)
        elif path.is_file():
            fsync_file(path)
    for folder in reversed(folders):
        fsync_dir(folder)


def _reserve(path: Path, suffix: str) -> tuple[int, Path]:
    """Create a new temporary file beside ``path`` (the umask's permissions); its fd and name."""
    while True:  # O_EXCL: a name left by a killed process with a recycled pid is skipped
        tmp = path.with_name(f".{path.name}.{os.getpid()}-{next(_SERIAL)}{suffix}")
        try:
            return os.open(tmp, _CREATE, 0o666), tmp
        except FileExistsError:
            continue


@contextlib.contextmanager
def _renamed_over(path: Path, tmp: Path, sync: bool) -> Iterator[None]:
    """Rename ``tmp`` over ``path`` when the block succeeds; remove it when the block fails."""
    try:
        yield
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if sync:
        fsync_dir(path.parent)


@contextlib.contextmanager
def replacing(path: Path, *, sync: bool = True, suffix: str = ".tmp") -> Iterator[Path]:
    """A new, empty temporary file beside ``path`` that replaces ``path`` if the block succeeds.

    The caller writes the file at the path it is given (``.NAME.PID-N`` plus ``suffix``);
    an error in the block removes it and leaves ``path`` as it was. With ``sync`` the file
    is fsynced before the rename and the directory after it.
    """
    fd, tmp = _reserve(path, suffix)
    os.close(fd)
    with _renamed_over(path, tmp, sync):
        yield tmp
        if sync:
            fsync_file(tmp)


def write_atomic(path: Path, data: str | bytes, *, sync: bool = True) -> None:
    """Replace ``path`` with ``data`` (text as UTF-8) through a temporary file, fsynced.

    ``sync=False`` skips both fsyncs, for records that check themselves on reading.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = _reserve(path, ".tmp")
    with _renamed_over(path, tmp, sync), os.fdopen(fd, "wb") as fh:
        fh.write(payload)
        if sync:
            fh.flush()
            os.fsync(fh.fileno())


def sha256_file(path: Path) -> str:
    """The hex SHA-256 of a file, read in blocks of a MiB."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


# --- fsynced writers of staged files -----------------------------------------------------------


def save_array(path: Path, array: NDArray[Any]) -> None:
    """Write ``array`` as a ``.npy`` file (no pickles), fsynced."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        np.save(fh, np.ascontiguousarray(array), allow_pickle=False)
        fh.flush()
        os.fsync(fh.fileno())


def save_stacked(path: Path, parts: Sequence[NDArray[np.float32]], width: int) -> None:
    """Write the row-wise concatenation of ``parts`` without holding it in memory twice."""
    rows = sum(p.shape[0] for p in parts)
    path.parent.mkdir(parents=True, exist_ok=True)
    out = open_memmap(path, mode="w+", dtype=np.float32, shape=(rows, width))
    start = 0
    for part in parts:
        out[start : start + part.shape[0]] = part
        start += part.shape[0]
    out.flush()
    del out
    fsync_file(path)


def write_lines(path: Path, items: Iterator[object], append_to: Path | None = None) -> None:
    """Write one JSON value a line (ASCII-escaped, so any text round-trips), fsynced.

    With ``append_to``, that file's bytes come first (an earlier version's lines).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        if append_to is not None:
            with open(append_to, "rb") as src:
                shutil.copyfileobj(src, fh)
        for item in items:
            fh.write(json.dumps(item).encode("ascii") + b"\n")
        fh.flush()
        os.fsync(fh.fileno())
