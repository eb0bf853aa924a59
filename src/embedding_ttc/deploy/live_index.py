"""The index version a service answers from, swapped when a new one is published.

``index add``, ``index compact`` and ``index ann`` publish a new version of an index by
replacing its ``manifest.json`` atomically (the files it lists are written before it). A
:class:`LiveIndex` holds the :class:`~embedding_ttc.deploy.reranker.Reranker` of the version a
service answers from. :meth:`LiveIndex.refresh` compares the manifest on disk with the one it
serves; when they differ it loads the new version *beside* the old one (same encoder), runs a
warm-up query, and swaps the reference between requests. A request reads
:attr:`LiveIndex.current` once when it starts and keeps that reranker to its end, so no request
sees a mix of versions and none fails during a swap; the old version's memory is released when
the last request holding it ends (its arrays are memory-mapped, its references dropped). A
version that cannot be loaded (a half-copied directory, a corrupt file) is not swapped in: the
service keeps answering from the version it has and the failure is reported.

:meth:`LiveIndex.watch` polls the manifest every ``interval`` seconds in a daemon thread;
``POST /admin/reload`` calls :meth:`LiveIndex.refresh` for operators who turn watching off.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from embedding_ttc.deploy.manifest import MANIFEST
from embedding_ttc.deploy.reranker import Reranker

WATCH_SECONDS = 0.5
"""How often a watching service looks at the manifest (new documents answer within about
this much time plus the new version's load and warm-up)."""

log = logging.getLogger("embedding_ttc.deploy")


def manifest_digest(directory: Path) -> str:
    """The sha256 of an index's ``manifest.json`` (what identifies its published version)."""
    return hashlib.sha256((directory / MANIFEST).read_bytes()).hexdigest()


def _stat_key(directory: Path) -> tuple[int, int, int, int]:
    """What identifies the manifest file now: device, inode, size, modification time (ns)."""
    st = (directory / MANIFEST).stat()
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass(frozen=True)
class Refresh:
    """What :meth:`LiveIndex.refresh` did.

    Attributes:
        swapped: whether a new version now answers.
        documents: the documents of the version that answers.
        error: why a new version was not swapped in ("" when none failed).

    """

    swapped: bool
    documents: int
    error: str = ""


class LiveIndex:
    """The reranker of the newest published version of one index directory.

    Args:
        reranker: the reranker of the version loaded at start.
        load: opens a reranker of the directory's current version, with the live encoder
            (default: ``Reranker(Index.load(directory), reranker.encoder)``).

    """

    def __init__(self, reranker: Reranker, load: Callable[[], Reranker] | None = None) -> None:
        self._current = reranker
        self.directory = Path(reranker.index.directory)
        self._digest = manifest_digest(self.directory)
        # The manifest file last hashed, and its digest: a watcher's refresh every half second
        # reads the file only when another one was published (by a rename: a new inode).
        self._seen = (_stat_key(self.directory), self._digest)
        self._failed = ""  # a version that failed to load is not tried again until it changes
        self._load = load or self._load_beside
        self._refreshing = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def current(self) -> Reranker:
        """The reranker a request starting now uses (read it once per request)."""
        return self._current

    def _load_beside(self) -> Reranker:
        from embedding_ttc.deploy.index import Index

        return Reranker(Index.load(self.directory), self._current.encoder)

    def refresh(self) -> Refresh:
        """Swap in the published version if it is not the one answering (see the module)."""
        with self._refreshing:
            try:
                key = _stat_key(self.directory)
                digest = self._seen[1] if key == self._seen[0] else manifest_digest(self.directory)
            except OSError as exc:
                return Refresh(False, self._documents(), f"manifest unreadable: {exc}")
            self._seen = (key, digest)
            if digest in (self._digest, self._failed):
                error = "" if digest == self._digest else "the published version failed to load"
                return Refresh(False, self._documents(), error)
            try:
                fresh = self._load()
                fresh.warm_up()
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
                self._failed = digest
                log.warning("index %s: new version not loaded, still serving the old: %s",
                            self.directory, error)  # fmt: skip
                return Refresh(False, self._documents(), error)
            self._current, self._digest = fresh, digest  # one reference swap: atomic
            log.info("index %s: now serving %d documents", self.directory, self._documents())
            return Refresh(True, self._documents())

    def _documents(self) -> int:
        return self._current.index.manifest.counts.documents

    def watch(self, interval: float = WATCH_SECONDS) -> None:
        """Refresh every ``interval`` seconds in a daemon thread until :meth:`stop`."""
        if self._thread is not None:
            return

        def loop() -> None:
            while not self._stop.wait(interval):
                self.refresh()

        self._thread = threading.Thread(target=loop, name="index-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop watching (a refresh under way finishes)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None
