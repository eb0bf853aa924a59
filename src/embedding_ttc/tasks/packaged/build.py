"""Rebuild the packaged tasks from BEIR task folders, byte for byte.

Each BEIR data file of the source folder is gzipped as it is (its bytes untouched, so the task
loads to the same content and the same fingerprint); ``STATS.json`` is copied. The gzip stream
is deterministic: no file name and a zero modification time in the header, compression level 9
(the same zlib gives the same bytes). ``NOTICE`` files are written by hand and left alone.

Usage::

    python -m embedding_ttc.tasks.packaged.build ../shared/datasets            # rewrite in place
    python -m embedding_ttc.tasks.packaged.build ../shared/datasets --out DIR  # elsewhere
"""

from __future__ import annotations

import argparse
import gzip
import io
from collections.abc import Sequence
from pathlib import Path

from embedding_ttc.durable.files import write_atomic
from embedding_ttc.errors import DatasetError
from embedding_ttc.tasks.packaged import PACKAGED_TASKS, packaged_root

DATA_FILES: tuple[str, ...] = ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv")
"""The BEIR files of a task, written as ``<file>.gz``."""

COPIED_FILES: tuple[str, ...] = ("STATS.json",)
"""Files copied unchanged (counts, licence and provenance of the source build)."""


def gzip_bytes(data: bytes) -> bytes:
    """``data`` gzipped reproducibly: no file name, mtime 0, level 9."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as gz:
        gz.write(data)
    return buf.getvalue()


def pack_task(source: Path, dest: Path) -> list[Path]:
    """Write the packaged form of the BEIR folder ``source`` into ``dest``.

    Returns:
        The paths written, in :data:`DATA_FILES` then :data:`COPIED_FILES` order.

    Raises:
        DatasetError: a file of the source folder is missing.

    """
    written = []
    for rel in (*DATA_FILES, *COPIED_FILES):
        src = source / rel
        if not src.is_file():
            raise DatasetError(f"cannot package {source.name}: no {src}")
        data = src.read_bytes()
        target = dest / (rel + ".gz" if rel in DATA_FILES else rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, gzip_bytes(data) if rel in DATA_FILES else data)
        written.append(target)
    return written


def pack_all(source_root: Path, out: Path, names: Sequence[str] = PACKAGED_TASKS) -> list[Path]:
    """Package every task in ``names`` from ``source_root/<name>`` into ``out/<name>``."""
    written: list[Path] = []
    for name in names:
        written += pack_task(source_root / name, out / name)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: rebuild the packaged tasks from a folder of BEIR task folders."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="folder holding the BEIR task folders")
    parser.add_argument(
        "--out", type=Path, default=None, help="where to write (default: the package's folder)"
    )
    args = parser.parse_args(argv)
    out = args.out or packaged_root()
    for path in pack_all(args.source, out):
        print(f"{path}  {path.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
