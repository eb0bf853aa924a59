"""A cache folder in the file-per-entry layout that came before the packed store, for tests.

The layout's writer is gone from the package (only its reader stays, for the migration); this
is that writer, byte for byte: magic, uint32 dimension, float32 payload, 16-byte BLAKE2b.
"""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path

import numpy as np

from embedding_ttc.encoders.cache import CachedEncoder
from embedding_ttc.encoders.cache_migration import legacy_path

from fakes import HashingEncoder


def write_legacy(folder: Path, key: bytes, vec: np.ndarray) -> Path:
    """One entry in the old file-per-entry format (magic, uint32 dim, float32, BLAKE2b)."""
    payload = np.ascontiguousarray(vec, dtype="<f4").tobytes()
    digest = hashlib.blake2b(key + payload, digest_size=16).digest()
    path = legacy_path(folder, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(struct.pack("<8sI", b"ETTCEMB1", vec.shape[0]) + payload + digest)
    return path


def legacy_cache(root: Path, texts: list[str], view: str = "retrieval.passage") -> CachedEncoder:
    """A cache root whose model folder is in the old layout, holding ``texts`` under ``view``."""
    inner = HashingEncoder(dim=16)
    enc = CachedEncoder(inner, root)
    for text, vec in zip(texts, inner.encode(texts, view=view), strict=True):
        write_legacy(enc.dir, enc.key(text, view, None), vec)
    return enc


def entry_files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.emb"))
