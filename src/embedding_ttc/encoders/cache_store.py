"""One model's embeddings packed in one SQLite database, shared by every process on a machine.

The database (``<cache root>/<model>-<revision>/embeddings.sqlite``) holds one row per entry::

    entries(key BLOB UNIQUE,  -- the 32-byte content address (sha256 of model, view, text, ...)
            view INTEGER,     -- views.id; NULL for entries migrated from the file-per-entry layout
            created INTEGER,  -- unix seconds when the row was written (prune --older-than)
            vec BLOB,         -- the full-dimension float32 vector, little-endian, raw
            digest BLOB)      -- 16-byte BLAKE2b of key + vec

and a ``meta`` table (schema version, model id, revision, dimension), so the dimension is kept
once per database, not once per row. A row whose vector has the wrong length or whose digest
does not match is reported as corrupt by :meth:`CacheStore.get`; the caller recomputes it
and :meth:`CacheStore.put` overwrites it.

Why this shape (measured on 20,000 random-key rows of 384 and 768 float32): a rowid table with
a unique index on the key takes 1.04-1.08x the bytes of the vectors it holds at 64 KiB pages and
writes four times as fast as a ``WITHOUT ROWID`` table keyed by the blob (1.17-1.27x; its rows
land at random places in the tree, so its leaves run part empty and every insert rewrites
large leaves); at SQLite's default 4 KiB pages a 1.5 KiB row spills to overflow pages (3x).

Several processes (search sandbox workers, Ray tasks, service workers) read and write one
database at once: it is in WAL mode (readers never wait for the writer), every connection waits
up to ``timeout`` seconds for a lock (``busy_timeout``), and each :meth:`~CacheStore.put`
is one ``BEGIN IMMEDIATE`` transaction. ``synchronous=NORMAL``: a power cut may lose the last
transactions, never corrupt the database, and lost entries are recomputed.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from embedding_ttc.errors import EmbeddingTTCError

SCHEMA_VERSION = 1
STORE_NAME = "embeddings.sqlite"
PAGE_SIZE = 65536  # see the module docstring: rows of 1-4 KiB fill 64 KiB pages to ~97 %
DIGEST_SIZE = 16
CACHE_KIB = 65536  # SQLite's page cache per connection, filled only as pages are read
#: Keys per ``SELECT ... WHERE key IN (...)`` (SQLite allows 32,766 parameters since 3.32).
READ_CHUNK = 512

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS views (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS entries (
    key BLOB NOT NULL UNIQUE,
    view INTEGER,
    created INTEGER NOT NULL,
    vec BLOB NOT NULL,
    digest BLOB NOT NULL
);
"""

# Connections a forked child inherited: never used nor closed there (SQLite forbids carrying a
# connection across fork), only kept from the garbage collector, which would close them.
_INHERITED: list[sqlite3.Connection] = []


class CacheStoreError(EmbeddingTTCError):
    """An embedding cache database that this version cannot read (newer schema, not SQLite)."""


def digest(key: bytes, payload: bytes) -> bytes:
    """The 16-byte BLAKE2b of ``key + payload`` that every entry carries."""
    h = hashlib.blake2b(key, digest_size=DIGEST_SIZE)
    h.update(payload)
    return h.digest()


@dataclass(frozen=True)
class Row:
    """One entry as stored: what migration inserts and :meth:`CacheStore.put` writes."""

    key: bytes
    view: str | None
    created: int
    payload: bytes
    digest: bytes


@dataclass(frozen=True)
class StoreSummary:
    """What one database holds: entries per view, the dimension and the bytes on disk.

    Attributes:
        path: the database file.
        model_id: the model's id, as recorded by the encoder that opened it (``""`` if none).
        revision: the model's revision (``""`` if none).
        dim: the vector dimension recorded in ``meta`` (0 if none yet).
        views: entries per view name (``"(migrated)"``: entries whose view was not recorded).
        vector_bytes: the bytes of the vectors themselves.
        disk_bytes: the bytes the database, its WAL and shared-memory files take on disk.

    """

    path: Path
    model_id: str
    revision: str
    dim: int
    views: dict[str, int] = field(default_factory=dict)
    vector_bytes: int = 0
    disk_bytes: int = 0

    @property
    def entries(self) -> int:
        """Entries in every view."""
        return sum(self.views.values())

    @property
    def ratio(self) -> float:
        """Disk bytes per byte of vector held (``nan`` when empty)."""
        return self.disk_bytes / self.vector_bytes if self.vector_bytes else float("nan")


MIGRATED_VIEW = "(migrated)"


def disk_bytes(path: Path) -> int:
    """Bytes the database and its ``-wal`` and ``-shm`` files occupy (allocated blocks)."""
    total = 0
    for suffix in ("", "-wal", "-shm"):
        try:
            st = os.stat(f"{path}{suffix}")
        except FileNotFoundError:
            continue
        total += getattr(st, "st_blocks", 0) * 512 or st.st_size
    return total


class CacheStore:
    """One model's packed cache entries: batched reads, one transaction per batch of writes.

    The connection is opened on first use and re-opened in a forked or unpickled copy, so a
    store (and the encoder holding it) can be sent to worker processes. One connection serves
    the threads of a process, one call at a time.

    Args:
        path: the database file (created with its folder on first use).
        timeout: seconds a call waits for another process's lock before it fails.

    """

    def __init__(self, path: Path | str, timeout: float = 300.0) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self._conn: sqlite3.Connection | None = None
        self._pid = 0
        self._lock = threading.Lock()
        self._view_ids: dict[str, int] = {}

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "timeout": self.timeout}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"], state["timeout"])  # type: ignore[misc]

    # --- connection ------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        if self._conn is not None:  # inherited through fork: abandon it, untouched
            _INHERITED.append(self._conn)
            self._view_ids = {}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False
        )
        try:
            self._setup(conn)
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise CacheStoreError(f"embedding cache {self.path} cannot be opened: {exc}") from exc
        self._conn, self._pid = conn, os.getpid()
        return conn

    def _setup(self, conn: sqlite3.Connection) -> None:
        conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
        # page_size only takes effect before the first table exists; WAL then keeps it.
        conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
        deadline = time.monotonic() + self.timeout
        while True:  # switching to WAL on a new file may race another process's switch
            try:
                conn.execute("PRAGMA journal_mode = WAL")
                break
            except sqlite3.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        conn.execute("PRAGMA synchronous = NORMAL")
        # 2 MiB by default: 32 pages of 64 KiB. A pass over a corpus reads each page for
        # several of its rows, out of order; a larger cache reads it from the OS once.
        conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        conn.execute("PRAGMA journal_size_limit = 67108864")  # a WAL shrinks back to 64 MiB
        version = _schema_version(conn)
        if version is None:  # a new file: create the tables (IF NOT EXISTS: a racing creator)
            with _transaction(conn):
                for statement in _statements():  # executescript would commit first
                    conn.execute(statement)
                version_row = ("schema_version", str(SCHEMA_VERSION))
                conn.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", version_row)
            version = _schema_version(conn)
        if version != SCHEMA_VERSION:
            raise sqlite3.DatabaseError(
                f"schema version {version}, this embedding-ttc reads version {SCHEMA_VERSION} "
                "(upgrade embedding-ttc, or remove the file)"
            )

    @contextmanager
    def _session(self, write: bool = False) -> Iterator[sqlite3.Connection]:
        """The connection, for one thread at a time; in a write transaction if ``write``."""
        with self._lock:
            conn = self._connect()
            if not write:
                yield conn
                return
            with _transaction(conn):
                yield conn

    def close(self) -> None:
        """Close the connection (a later call opens a new one)."""
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    # --- meta ------------------------------------------------------------------------------

    def meta(self) -> dict[str, str]:
        """The ``meta`` table: schema_version, and model_id, revision, dim once recorded."""
        with self._session() as conn:
            return dict(conn.execute("SELECT name, value FROM meta").fetchall())

    def record(
        self, *, model_id: str | None = None, revision: str | None = None, dim: int | None = None
    ) -> None:
        """Record what the database holds (values given replace those recorded)."""
        given = {"model_id": model_id, "revision": revision, "dim": dim}
        values = {k: str(v) for k, v in given.items() if v is not None}
        if all(self.meta().get(k) == v for k, v in values.items()):
            return  # the usual case: no write transaction
        with self._session(write=True) as conn:
            conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", values.items())

    # --- entries ---------------------------------------------------------------------------

    def get(self, keys: Sequence[bytes], dim: int) -> tuple[dict[bytes, np.ndarray], int]:
        """The stored vectors of ``keys`` that are whole, and how many rows were corrupt.

        A row is corrupt when its vector is not ``dim`` float32 or its digest does not match;
        it is left out of the result (a miss), to be overwritten by the next :meth:`put`.
        """
        found: dict[bytes, np.ndarray] = {}
        corrupt = 0
        size = 4 * dim
        unique = list(dict.fromkeys(keys))
        with self._session() as conn:
            for lo in range(0, len(unique), READ_CHUNK):
                chunk = unique[lo : lo + READ_CHUNK]
                marks = ",".join("?" * len(chunk))
                # CAST: a value of another type (a text) reads as its bytes and fails the checks.
                rows = conn.execute(
                    f"SELECT key, CAST(vec AS BLOB), CAST(digest AS BLOB) FROM entries "
                    f"WHERE key IN ({marks})",
                    chunk,
                ).fetchall()
                for key, vec, stored in rows:
                    if len(vec) != size or digest(key, vec) != stored:
                        corrupt += 1
                        continue
                    found[key] = np.frombuffer(vec, dtype="<f4")
        return found, corrupt

    def put(self, keys: Sequence[bytes], vectors: np.ndarray, view: str) -> None:
        """Store (or overwrite) one vector per key under ``view``, in one transaction."""
        now = int(time.time())
        mat = np.ascontiguousarray(vectors, dtype="<f4")
        rows = []
        for key, vec in zip(keys, mat, strict=True):
            payload = vec.tobytes()
            rows.append(Row(key, view, now, payload, digest(key, payload)))
        self.write(rows, replace=True)

    def write(self, rows: Iterable[Row], *, replace: bool) -> int:
        """Insert ``rows`` in one transaction; ``replace=False`` keeps a key already there.

        Returns the number of rows inserted (with ``replace=False``, those not there before).
        """
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        rows = list(rows)
        with self._session(write=True) as conn:
            ids = {v: self._view_id(conn, v) for v in {r.view for r in rows} if v is not None}
            before = conn.total_changes
            conn.executemany(
                f"{verb} INTO entries (key, view, created, vec, digest) VALUES (?, ?, ?, ?, ?)",
                [(r.key, ids.get(r.view or ""), r.created, r.payload, r.digest) for r in rows],
            )
            inserted = conn.total_changes - before
        self._view_ids.update(ids)  # only once committed: a rolled-back id is no id
        return inserted

    def _view_id(self, conn: sqlite3.Connection, name: str) -> int:
        if name not in self._view_ids:
            conn.execute("INSERT OR IGNORE INTO views (name) VALUES (?)", (name,))
            (vid,) = conn.execute("SELECT id FROM views WHERE name = ?", (name,)).fetchone()
            return int(vid)
        return self._view_ids[name]

    def __len__(self) -> int:
        return self.count()

    def summary(self) -> StoreSummary:
        """Entries per view, bytes of vectors and bytes on disk (reads every row's header)."""
        with self._session() as conn:
            meta = dict(conn.execute("SELECT name, value FROM meta").fetchall())
            rows = conn.execute(
                "SELECT v.name, count(*), sum(length(e.vec)) FROM entries e "
                "LEFT JOIN views v ON v.id = e.view GROUP BY e.view ORDER BY v.name"
            ).fetchall()
        views = {(name or MIGRATED_VIEW): int(n) for name, n, _ in rows}
        return StoreSummary(
            path=self.path,
            model_id=meta.get("model_id", ""),
            revision=meta.get("revision", ""),
            dim=int(meta.get("dim", 0)),
            views=views,
            vector_bytes=sum(int(b or 0) for _, _, b in rows),
            disk_bytes=disk_bytes(self.path),
        )

    def count(self, before: float | None = None) -> int:
        """Entries written before ``before`` (unix seconds; ``None``: every entry)."""
        with self._session() as conn:
            if before is None:
                return int(conn.execute("SELECT count(*) FROM entries").fetchone()[0])
            query = "SELECT count(*) FROM entries WHERE created < ?"
            return int(conn.execute(query, (int(before),)).fetchone()[0])

    def delete(self, before: float | None = None) -> int:
        """Delete the entries written before ``before`` (``None``: all); return how many.

        The file keeps its size until :meth:`compact`.
        """
        with self._session(write=True) as conn:
            if before is None:
                return conn.execute("DELETE FROM entries").rowcount
            return conn.execute("DELETE FROM entries WHERE created < ?", (int(before),)).rowcount

    def compact(self) -> None:
        """Give the space of deleted rows back to the file system (VACUUM, WAL truncated)."""
        with self._session() as conn:
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def checkpoint(self) -> None:
        """Copy the WAL into the database and truncate it (for measuring bytes on disk)."""
        with self._session() as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _schema_version(conn: sqlite3.Connection) -> int | None:
    """The recorded schema version; ``None`` for a database without tables yet."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE name = 'schema_version'").fetchone()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return None
        raise
    return None if row is None else int(row[0]) if str(row[0]).isdigit() else -1


def _statements() -> list[str]:
    return [s.strip() for s in _SCHEMA.split(";") if s.strip()]


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` (take the write lock now, waiting ``busy_timeout``), then commit."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def model_stores(root: Path) -> list[Path]:
    """The model folders under a cache root that hold a database, sorted by name."""
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if (p / STORE_NAME).is_file())
