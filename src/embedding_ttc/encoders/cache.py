"""An on-disk, content-addressed embedding cache that is itself an encoder.

Each entry holds the full-dimension, L2-normalised embedding of one text under one view, keyed by
``sha256(model id, revision, view, max_length, text)``. ``dim`` is applied after lookup
(truncate, then re-normalise), so one entry serves every Matryoshka dimension.

The entries of one model live in one SQLite database, ``<root>/<model>-<revision>/
embeddings.sqlite`` (:class:`~embedding_ttc.encoders.cache_store.CacheStore`), shared by
every process that encodes with that model. A call looks all its texts up in batched queries,
then encodes the misses a block at a time, each sized to take about half a minute at the
encoder's measured rate, and stores each block in one transaction. A row that
does not verify (wrong length, wrong digest) is treated as a miss: it is recomputed and
overwritten, never returned.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from embedding_ttc.encoders.base import (
    Embeddings,
    Encoder,
    EncoderInfo,
    check_dim,
    check_max_length,
    check_view,
    finish,
)
from embedding_ttc.encoders.cache_store import STORE_NAME, CacheStore


def default_cache_dir() -> Path:
    """``$EMBEDDING_TTC_CACHE`` if set, else the user cache directory of the platform."""
    env = os.environ.get("EMBEDDING_TTC_CACHE")
    if env:
        return Path(env)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("embedding-ttc")) / "embeddings"


@dataclass
class CacheStats:
    """Hits, misses, corrupt entries replaced, and seconds spent in the wrapped encoder."""

    hits: int = 0
    misses: int = 0
    corrupt: int = 0
    forward_seconds: float = 0.0


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:80] or "model"


#: The most misses encoded per call of the wrapped encoder (each block is stored before the
#: next one starts).
BLOCK_SIZE = 2048

#: The encoding time a block aims at: blocks are sized from the encoder's measured rate, so a
#: slow encoder (a quantised multilingual model on two cores, a few texts a second) still
#: stores its work every half minute, and an interruption loses at most that much.
BLOCK_SECONDS = 30.0

#: The size of a call's first block before any rate is known.
FIRST_BLOCK = 64


class CachedEncoder:
    """Serve embeddings from disk; encode what is missing a block of texts per call.

    Each block is stored as soon as it is encoded, so an interrupted call loses at most one
    block. Blocks are sized to take about ``block_seconds`` at the rate the last block was
    encoded (the first :data:`FIRST_BLOCK` texts, while no rate is known), and hold at most
    ``block_size`` texts.

    Args:
        inner: the encoder whose embeddings are cached.
        root: the cache directory (default :func:`default_cache_dir`).
        block_size: the most misses per call of ``inner``.
        block_seconds: the encoding time a block aims at.
        clock: seconds, for the rate (``time.perf_counter``).

    """

    def __init__(
        self,
        inner: Encoder,
        root: Path | str | None = None,
        block_size: int = BLOCK_SIZE,
        *,
        block_seconds: float = BLOCK_SECONDS,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        if block_size < 1:
            raise ValueError(f"block_size is at least 1, got {block_size}")
        if not block_seconds > 0:
            raise ValueError(f"block_seconds is positive, got {block_seconds}")
        self.inner = inner
        self.block_size = block_size
        self.block_seconds = block_seconds
        self.clock = clock
        self._rate: float | None = None  # texts per second of the last block encoded
        info = inner.info
        self.root = Path(root) if root is not None else default_cache_dir()
        self.dir = self.root / f"{_slug(info.model_id)}-{_slug(info.revision)}"
        self.stats = CacheStats()
        self.store = CacheStore(self.dir / STORE_NAME)
        self._opened = False  # nothing touches the disk before the first encode
        self._prefixes: dict[tuple[str, int | None], Any] = {}

    def _open(self) -> CacheStore:
        """The store, recorded as this model's."""
        if not self._opened:
            info = self.inner.info
            self.store.record(model_id=info.model_id, revision=info.revision, dim=info.dim)
            self._opened = True
        return self.store

    def __getstate__(self) -> dict[str, Any]:
        # Hash objects do not pickle; the store re-opens its connection in the new process.
        return {**self.__dict__, "_prefixes": {}}

    @property
    def info(self) -> EncoderInfo:
        """The wrapped encoder's info."""
        return self.inner.info

    def key(self, text: str, view: str, max_length: int | None) -> bytes:
        """The content address of one (text, view, max_length) under this model."""
        # The device is deliberately not part of the key. It changes the float rounding of the
        # same computation (a GPU's kernels and reduction order differ from the CPU's, by about
        # 1e-6 relative in float32: the size of the differences between two CPUs with other
        # instruction sets or thread counts, which are not keyed either), not what is computed;
        # and a corpus encoded once on a GPU is meant to serve later runs on a laptop. Runtimes
        # whose outputs differ by more (int8 ONNX) are other encoders with another model id.
        prefix = self._prefixes.get((view, max_length))
        if prefix is None:  # the hash of the parts shared by every text: computed once
            info = self.inner.info
            prefix = hashlib.sha256()
            for part in (info.model_id, info.revision, view, str(max_length)):
                prefix.update(part.encode("utf-8"))
                prefix.update(b"\0")
            self._prefixes[(view, max_length)] = prefix
        h = prefix.copy()
        h.update(text.encode("utf-8", "surrogatepass"))
        return h.digest()

    def _twin_views(self, view: str) -> list[str]:
        """Other views with the same realisation: their entries are this view's embeddings.

        Entries are keyed by view name; when views collapse (one shared encoding, or two views
        with the same prompt), a miss under one name is looked up under its twins before the
        model runs, so re-encoding a corpus under another name of the same view is free.
        """
        views = self.inner.info.views
        spec = views.get(view)
        return [v for v, s in views.items() if v != view and s == spec]

    def next_block(self) -> int:
        """How many misses the next call of ``inner`` gets (see the class docstring)."""
        if self._rate is None:
            return min(self.block_size, FIRST_BLOCK)
        sized = self._rate * self.block_seconds
        return self.block_size if sized >= self.block_size else max(1, int(sized))

    def _lookup(self, keys: Sequence[bytes], dim: int) -> dict[bytes, np.ndarray]:
        found, corrupt = self._open().get(keys, dim)
        self.stats.corrupt += corrupt
        return found

    def encode(
        self,
        texts: Sequence[str],
        *,
        view: str,
        dim: int | None = None,
        max_length: int | None = None,
    ) -> Embeddings:
        """Look every text up; encode and store the misses a block at a time; apply ``dim``."""
        check_view(view)
        full = self.inner.info.dim
        dim = check_dim(dim, full)
        max_length = check_max_length(max_length)
        out = np.empty((len(texts), full), dtype=np.float32)
        keys = [self.key(t, view, max_length) for t in texts]
        found = self._lookup(keys, full)
        first: dict[bytes, int] = {}  # the first text of each key not found under its view
        for i, k in enumerate(keys):
            if k not in found:
                first.setdefault(k, i)
        for twin in self._twin_views(view):
            if not first:
                break
            twin_keys = {self.key(texts[i], twin, max_length): k for k, i in first.items()}
            for tk, vec in self._lookup(list(twin_keys), full).items():
                found[twin_keys[tk]] = vec
                del first[twin_keys[tk]]
        missing: dict[bytes, list[int]] = {k: [] for k in first}
        for i, k in enumerate(keys):
            if k in missing:
                missing[k].append(i)
            else:
                out[i] = found[k]
        self.stats.hits += len(texts) - sum(len(v) for v in missing.values())
        order = list(missing)
        # Misses are encoded and stored a block at a time, so an interrupted call (Ctrl-C, a
        # killed job) keeps every block it finished: a long sentence-level pass resumes.
        lo = 0
        while lo < len(order):
            block = order[lo : lo + self.next_block()]
            lo += len(block)
            start = self.clock()
            fresh = self.inner.encode(
                [texts[missing[k][0]] for k in block], view=view, max_length=max_length
            )
            elapsed = self.clock() - start
            self._rate = len(block) / elapsed if elapsed > 0 else float("inf")
            self.stats.forward_seconds += elapsed
            self.stats.misses += len(block)
            self.store.put(block, fresh, view)
            for k, vec in zip(block, fresh, strict=True):
                out[missing[k]] = vec
        return out if dim == full else finish(out, dim)
