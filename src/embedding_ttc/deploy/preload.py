"""Reading an index's files into the page cache before serving it (``serve --preload``).

An index is memory-mapped: a page of its vectors, texts or ANN lists is read from disk the
first time a query touches it, and at a million documents the first queries that reach a cold
part of the index wait for those reads (the tail of the scale benchmark's ``/search`` p95).
Search engines offer to read an index ahead for that reason (Elasticsearch's
``index.store.preload``, Lucene's ``MMapDirectory`` preload). :func:`preload` reads every file
the manifest lists, once, sequentially; the kernel keeps them cached for every process that
maps them, so one preload serves all the workers of ``serve --workers N``, as long as memory
allows (the cache is evicted under pressure, not pinned).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from embedding_ttc.deploy.manifest import SEGMENTS, Manifest

CHUNK = 8 << 20
"""Bytes read at a time."""


def index_files(root: Path, manifest: Manifest) -> Iterator[Path]:
    """Every file the manifest lists: the index's own, then each segment's."""
    for rel in manifest.files:
        yield root / rel
    for segment in manifest.segments:
        folder = root / SEGMENTS / segment.name
        for rel in segment.files:
            yield folder / rel


def preload(root: Path, manifest: Manifest) -> int:
    """Read every file of the index at ``root`` once; the bytes read."""
    buffer = bytearray(CHUNK)
    view = memoryview(buffer)
    total = 0
    for path in index_files(root, manifest):
        with open(path, "rb", buffering=0) as fh:
            while n := fh.readinto(view):
                total += n
    return total
