"""An on-disk, content-addressed embedding cache that is itself an encoder.

Each entry holds the full-dimension, L2-normalised embedding of one text under one view, keyed by
``sha256(model id, revision, view, max_length, text)``. ``dim`` is applied after lookup
(truncate, then re-normalise), so one entry serves every Matryoshka dimension.

Entry format (little-endian): the 8-byte magic ``ETTCEMB1``, a uint32 dimension, ``dim`` float32
values, then a 16-byte BLAKE2b digest of ``key + payload``. An entry is written to a temporary
file in the same directory and renamed into place (:func:`~embedding_ttc.durable.write_atomic`),
so a reader in another process sees either no entry or a whole one. A truncated or corrupted
entry (wrong size, wrong digest, another key) is treated as a miss: it is recomputed and
overwritten, never returned. That is also why entries are not fsynced.
"""

from __future__ import annotations

import hashlib
import os
import re
import struct
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from embedding_ttc.durable import write_atomic
from embedding_ttc.encoders.base import (
    Embeddings,
    Encoder,
    EncoderInfo,
    check_dim,
    check_max_length,
    check_view,
    finish,
)

_MAGIC = b"ETTCEMB1"
_HEADER = struct.Struct("<8sI")
_DIGEST = 16
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0)  # O_BINARY: Windows only


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


#: Misses encoded per call of the wrapped encoder (and stored before the next block starts).
BLOCK_SIZE = 2048


class CachedEncoder:
    """Serve embeddings from disk; encode what is missing, ``block_size`` texts per call.

    Args:
        inner: the encoder whose embeddings are cached.
        root: the cache directory (default :func:`default_cache_dir`).
        block_size: misses per call of ``inner``; each block is stored as soon as it is
            encoded, so an interrupted call loses at most one block.

    """

    def __init__(
        self, inner: Encoder, root: Path | str | None = None, block_size: int = BLOCK_SIZE
    ) -> None:
        if block_size < 1:
            raise ValueError(f"block_size is at least 1, got {block_size}")
        self.inner = inner
        self.block_size = block_size
        info = inner.info
        self.root = Path(root) if root is not None else default_cache_dir()
        self.dir = self.root / f"{_slug(info.model_id)}-{_slug(info.revision)}"
        self._dir_str = os.fspath(self.dir)
        self.stats = CacheStats()
        self._entry_size = _HEADER.size + 4 * info.dim + _DIGEST

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
        info = self.inner.info
        h = hashlib.sha256()
        for part in (info.model_id, info.revision, view, str(max_length)):
            h.update(part.encode("utf-8"))
            h.update(b"\0")
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

    def _path(self, key: bytes) -> str:
        hexkey = key.hex()
        return f"{self._dir_str}{os.sep}{hexkey[:2]}{os.sep}{hexkey}.emb"

    def _read(self, key: bytes) -> np.ndarray | None:
        # A warm re-run reads every entry of a corpus, sentence by sentence: one open and one
        # read system call per entry (Path.read_bytes adds a stat and buffering, ~3x slower).
        try:
            fd = os.open(self._path(key), _READ_FLAGS)
        except FileNotFoundError:
            return None
        except OSError:
            self.stats.corrupt += 1
            return None
        try:
            blob = os.read(fd, self._entry_size + 1)  # one byte more: a longer file is corrupt
        except OSError:
            self.stats.corrupt += 1
            return None
        finally:
            os.close(fd)
        dim = self.inner.info.dim
        if len(blob) != self._entry_size:
            self.stats.corrupt += 1
            return None
        magic, stored_dim = _HEADER.unpack_from(blob)
        payload = blob[_HEADER.size : -_DIGEST]
        digest = hashlib.blake2b(key + payload, digest_size=_DIGEST).digest()
        if magic != _MAGIC or stored_dim != dim or digest != blob[-_DIGEST:]:
            self.stats.corrupt += 1
            return None
        return np.frombuffer(payload, dtype="<f4")

    def _write(self, key: bytes, vec: np.ndarray) -> None:
        path = Path(self._path(key))
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = np.ascontiguousarray(vec, dtype="<f4").tobytes()
        digest = hashlib.blake2b(key + payload, digest_size=_DIGEST).digest()
        blob = _HEADER.pack(_MAGIC, vec.shape[0]) + payload + digest
        # Not fsynced: an entry carries its digest, so one torn by a crash reads as a miss and
        # is recomputed, and a corpus pass writes hundreds of thousands of entries.
        write_atomic(path, blob, sync=False)

    def encode(
        self,
        texts: Sequence[str],
        *,
        view: str,
        dim: int | None = None,
        max_length: int | None = None,
    ) -> Embeddings:
        """Look every text up; encode the misses in one call; store them; apply ``dim``."""
        check_view(view)
        full = self.inner.info.dim
        dim = check_dim(dim, full)
        max_length = check_max_length(max_length)
        out = np.empty((len(texts), full), dtype=np.float32)
        keys = [self.key(t, view, max_length) for t in texts]
        twins = self._twin_views(view)
        missing: dict[bytes, list[int]] = {}
        for i, k in enumerate(keys):
            if k in missing:
                missing[k].append(i)
                continue
            vec = self._read(k)
            for twin in twins:
                if vec is not None:
                    break
                vec = self._read(self.key(texts[i], twin, max_length))
            if vec is None:
                missing[k] = [i]
            else:
                out[i] = vec
        self.stats.hits += len(texts) - sum(len(v) for v in missing.values())
        order = list(missing)
        # Misses are encoded and stored a block at a time, so an interrupted call (Ctrl-C, a
        # killed job) keeps every block it finished: a long sentence-level pass resumes.
        for lo in range(0, len(order), self.block_size):
            block = order[lo : lo + self.block_size]
            start = time.perf_counter()
            fresh = self.inner.encode(
                [texts[missing[k][0]] for k in block], view=view, max_length=max_length
            )
            self.stats.forward_seconds += time.perf_counter() - start
            self.stats.misses += len(block)
            for k, vec in zip(block, fresh, strict=True):
                self._write(k, vec)
                out[missing[k]] = vec
        return out if dim == full else finish(out, dim)
