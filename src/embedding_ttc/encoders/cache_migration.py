"""The one-time move of a file-per-entry cache folder into the model's packed database.

Before the packed store (:mod:`~embedding_ttc.encoders.cache_store`), each entry was a file
``<model folder>/<2 hex>/<sha256 hex>.emb``: the 8-byte magic ``ETTCEMB1``, a uint32 dimension,
the float32 payload, then a 16-byte BLAKE2b digest of ``key + payload`` (the digest the packed
rows carry too, so it is copied, not recomputed). :func:`read_legacy` is that layout's reader.

:func:`migrate_folder` moves a folder's entries into its database one batch at a time: the
batch's verified entries are inserted in one transaction (``INSERT OR IGNORE``: a key already
there, from an earlier interrupted run or a fresh encode, is kept), and only after that commit
are the batch's files removed. A kill at any moment therefore loses nothing (a file is removed
only once its row is durable in the WAL) and duplicates nothing (the key is unique); the next
run carries on where it stopped. Corrupt entries (wrong size, magic, dimension or digest) are
counted, not inserted, and removed with their batch. An inter-process lock on
``<model folder>/migrate.lock`` keeps two processes from migrating one folder at once.

The entries' view is not recoverable (it is hashed into the key), so migrated rows have none;
the key still finds them under whichever view wrote them.
"""

from __future__ import annotations

import logging
import os
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from embedding_ttc.durable import file_lock
from embedding_ttc.encoders.cache_store import (
    DIGEST_SIZE,
    STORE_NAME,
    CacheStore,
    Row,
    digest,
)

LEGACY_MAGIC = b"ETTCEMB1"
_HEADER = struct.Struct("<8sI")
_SUBDIR = re.compile(r"[0-9a-f]{2}")
_ENTRY = re.compile(r"[0-9a-f]{64}\.emb")
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0)  # O_BINARY: Windows only
#: Entries inserted per transaction (their files are removed once it commits).
BATCH = 1024

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]
"""Called with (entries done, entries in all) after each commit."""


@dataclass
class MigrationReport:
    """What a migration did.

    Attributes:
        moved: entries inserted into the database.
        kept: verified entries whose key the database already held (left as they were).
        corrupt: entries that failed verification (not inserted; their files removed).
        removed: files removed (entries and temporary files of interrupted writers).

    """

    moved: int = 0
    kept: int = 0
    corrupt: int = 0
    removed: int = 0

    def add(self, other: MigrationReport) -> None:
        """Add another report's counts to this one."""
        self.moved += other.moved
        self.kept += other.kept
        self.corrupt += other.corrupt
        self.removed += other.removed


def legacy_path(folder: Path, key: bytes) -> Path:
    """Where the file-per-entry layout kept the entry of ``key``."""
    hexkey = key.hex()
    return folder / hexkey[:2] / f"{hexkey}.emb"


def parse_legacy(blob: bytes, key: bytes, dim: int | None) -> tuple[bytes, bytes] | None:
    """The (payload, digest) of a legacy entry's bytes, or ``None`` when it is corrupt.

    ``dim`` is the dimension the entry must have (``None``: the one in its header).
    """
    if len(blob) < _HEADER.size + DIGEST_SIZE:
        return None
    magic, stored_dim = _HEADER.unpack_from(blob)
    if magic != LEGACY_MAGIC or (dim is not None and stored_dim != dim):
        return None
    if len(blob) != _HEADER.size + 4 * stored_dim + DIGEST_SIZE:
        return None
    payload, stored = blob[_HEADER.size : -DIGEST_SIZE], blob[-DIGEST_SIZE:]
    return (payload, stored) if digest(key, payload) == stored else None


def read_legacy(folder: Path, key: bytes, dim: int) -> np.ndarray | None:
    """The file-per-entry layout's read path: the vector of ``key``, or ``None`` (absent/corrupt).

    One open and one read system call per entry, as the old encoder read it.
    """
    try:
        fd = os.open(legacy_path(folder, key), _READ_FLAGS)
    except OSError:
        return None
    try:
        blob = os.read(fd, _HEADER.size + 4 * dim + DIGEST_SIZE + 1)  # a longer file is corrupt
    except OSError:
        return None
    finally:
        os.close(fd)
    parsed = parse_legacy(blob, key, dim)
    return None if parsed is None else np.frombuffer(parsed[0], dtype="<f4")


def _subdirs(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as it:
            return sorted(Path(e.path) for e in it if _SUBDIR.fullmatch(e.name) and e.is_dir())
    except FileNotFoundError:
        return []


def has_legacy_layout(folder: Path) -> bool:
    """Whether ``folder`` still holds sub-folders of the file-per-entry layout."""
    return bool(_subdirs(folder))


def _read_file(path: Path) -> tuple[bytes, int] | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(), int(os.fstat(fh.fileno()).st_mtime)
    except OSError:
        return None


def _migrate_batch(
    paths: list[Path], store: CacheStore, dim: int | None
) -> tuple[MigrationReport, int | None]:
    report = MigrationReport()
    rows = []
    for path in paths:
        read = _read_file(path)
        parsed = None if read is None else parse_legacy(read[0], bytes.fromhex(path.stem), dim)
        if parsed is None or read is None:
            report.corrupt += 1
            continue
        if dim is None:  # the first good entry fixes the dimension of a new database
            dim = len(parsed[0]) // 4
            store.record(dim=dim)
        rows.append(Row(bytes.fromhex(path.stem), None, read[1], *parsed))
    report.moved = store.write(rows, replace=False)  # committed before any file goes
    report.kept = len(rows) - report.moved
    for path in paths:
        path.unlink(missing_ok=True)
        report.removed += 1
    return report, dim


def _entries_of(sub: Path, report: MigrationReport) -> list[tuple[int, Path]]:
    """A sub-folder's entry files with their mtimes; killed writers' temporary files go."""
    out = []
    try:
        with os.scandir(sub) as it:
            for e in it:
                if _ENTRY.fullmatch(e.name):
                    out.append((e.stat().st_mtime_ns, Path(e.path)))
                elif e.name.startswith(".") and e.name.endswith(".tmp"):
                    # ``.<name>.<pid>-<n>.tmp``: a writer killed mid-entry; never an entry.
                    os.unlink(e.path)
                    report.removed += 1
    except FileNotFoundError:  # removed meanwhile (by hand; migrators hold the lock)
        pass
    return out


def _remove_folder(sub: Path) -> None:
    try:
        sub.rmdir()
    except FileNotFoundError:
        pass
    except OSError:  # a file that is not an entry: left where it is, with its folder
        log.warning("kept %s: it holds files that are not cache entries", sub)


def migrate_folder(
    folder: Path,
    store: CacheStore | None = None,
    *,
    batch: int = BATCH,
    progress: Progress | None = None,
) -> MigrationReport:
    """Move the file-per-entry entries of one model folder into its database.

    Args:
        folder: the model's cache folder (``<root>/<model>-<revision>``).
        store: its database (default: ``folder / embeddings.sqlite``).
        batch: entries per transaction.
        progress: called with (entries done, entries in all) after each commit.

    Returns:
        What was moved, kept, found corrupt and removed (all zero when nothing was left).

    """
    if batch < 1:
        raise ValueError(f"batch is at least 1, got {batch}")
    store = store if store is not None else CacheStore(folder / STORE_NAME)
    report = MigrationReport()
    if not has_legacy_layout(folder):
        return report
    with file_lock(folder / "migrate"):
        subdirs = _subdirs(folder)  # again: another process may have migrated meanwhile
        recorded = store.meta().get("dim")
        dim = int(recorded) if recorded else None
        files = [f for sub in subdirs for f in _entries_of(sub, report)]
        # In the order they were written: the entries of one corpus pass were written
        # together and stay together in the table's pages, so a later pass over that corpus
        # reads few pages (key order would scatter them over the whole file).
        files.sort()
        for lo in range(0, len(files), batch):
            paths = [p for _, p in files[lo : lo + batch]]
            part, dim = _migrate_batch(paths, store, dim)
            report.add(part)
            if progress is not None:
                progress(min(lo + batch, len(files)), len(files))
        for sub in subdirs:
            _remove_folder(sub)
    return report


def legacy_folders(root: Path) -> list[Path]:
    """The model folders under a cache root that still hold the file-per-entry layout."""
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and has_legacy_layout(p))
