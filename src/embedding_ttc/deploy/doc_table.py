"""A segment's documents on disk: read by row, never held in memory whole.

Files of a segment (:mod:`embedding_ttc.deploy.segment`)::

    docs.jsonl         {"id", "title", "text"} per document, in row order
    docs.offsets.npy   int64, rows + 1: where each line starts (the last: the file's size)
    ids.jsonl          the ids alone, one JSON string a line (read whole on load: id -> row)
    docs.hash.npy      uint64 per document: BLAKE2b-64 of its title and text joined, so that
                       a caller's bare text is found without a table of every text in memory

A row is read by slicing the memory-mapped ``docs.jsonl`` at its offsets and parsing one line.
What stays in memory is the ids (a tuple of strings, about 60 to 100 bytes per id in CPython),
8 bytes of offset and 8 of hash per document, all paged in by the OS as needed.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
from array import array
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.deploy.corpus import Document
from embedding_ttc.deploy.errors import IndexCorruptError

DOCS = "docs.jsonl"
OFFSETS = "docs.offsets.npy"
IDS = "ids.jsonl"
HASHES = "docs.hash.npy"


def text_hash(text: str) -> int:
    """BLAKE2b-64 of a text in UTF-8 (lone surrogates kept), as an unsigned integer."""
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def write_doc_table(directory: Path, docs: Iterable[Document]) -> int:
    """Write the document files of a segment into ``directory`` (staged); return the count."""
    from embedding_ttc.durable import save_array

    offsets = array("q", [0])
    hashes = array("Q")
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / DOCS, "wb") as out, open(directory / IDS, "wb") as ids:
        for doc in docs:
            line = json.dumps({"id": doc.id, "title": doc.title, "text": doc.text}).encode("ascii")
            out.write(line + b"\n")
            ids.write(json.dumps(doc.id).encode("ascii") + b"\n")
            offsets.append(offsets[-1] + len(line) + 1)
            hashes.append(text_hash(doc.joined))
        for fh in (out, ids):
            fh.flush()
            os.fsync(fh.fileno())
    save_array(directory / OFFSETS, np.frombuffer(offsets, dtype=np.int64))
    save_array(directory / HASHES, np.frombuffer(hashes, dtype=np.uint64))
    return len(hashes)


class DocTable:
    """The documents of one segment, read by row from its memory-mapped ``docs.jsonl``.

    Attributes:
        ids: the document ids, in row order.
        hashes: :func:`text_hash` of each document's joined title and text.

    """

    def __init__(
        self, path: Path, offsets: NDArray[np.int64], ids: Sequence[str], hashes: NDArray[Any]
    ) -> None:
        self.path = path
        self.ids = tuple(ids)
        self.hashes = hashes
        self._offsets = offsets
        with open(path, "rb") as fh:
            self._data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def open(cls, directory: Path, n: int) -> DocTable:
        """The table of a segment of ``n`` documents (its files' sizes already checked)."""
        from embedding_ttc.deploy.arrays import load_array

        offsets = load_array(directory / OFFSETS, np.int64, (n + 1,))
        hashes = load_array(directory / HASHES, np.uint64, (n,))
        raw = (directory / IDS).read_bytes()
        try:
            ids = json.loads(b"[" + b",".join(raw.splitlines()) + b"]")
        except ValueError as exc:
            raise IndexCorruptError(f"index file {directory / IDS} is not JSON ({exc})") from None
        if len(ids) != n or not all(isinstance(i, str) for i in ids):
            raise IndexCorruptError(f"index file {directory / IDS} does not hold {n} ids")
        if int(offsets[-1]) != (directory / DOCS).stat().st_size:
            raise IndexCorruptError(f"index file {directory / OFFSETS} does not fit {DOCS}")
        return cls(directory / DOCS, offsets, ids, hashes)

    def document(self, row: int) -> Document:
        """The document at ``row`` of the segment."""
        start, stop = int(self._offsets[row]), int(self._offsets[row + 1])
        return _parse(self._data[start:stop], self.path, row + 1)

    def joined(self, row: int) -> str:
        """The title and text of the document at ``row``, joined as the encoder sees them."""
        return self.document(row).joined


def _parse(line: bytes, path: Path, lineno: int) -> Document:
    try:
        row = json.loads(line)
        return Document(**row)
    except (ValueError, TypeError):
        raise IndexCorruptError(f"index file {path}:{lineno} has a malformed record") from None
