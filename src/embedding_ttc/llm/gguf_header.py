"""The GGUF header: just enough of it to read one string of the metadata section.

Layout (GGUF v2 and v3, little-endian; ggml's docs/gguf.md): the magic b"GGUF", a uint32
version, a uint64 tensor count, a uint64 key-value count, then that many pairs of a key (a
string) and a typed value. A string is a uint64 byte length and UTF-8 bytes; a value is a uint32
type and the payload; an array is a uint32 element type, a uint64 count and the elements. The
tensor infos and data follow the metadata and are never read here.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import IO

from embedding_ttc.errors import EmbeddingTTCError


class GGUFHeaderError(EmbeddingTTCError, ValueError):
    """A file is not a GGUF file, or its metadata section is truncated or malformed."""


_STRING, _ARRAY = 8, 9
#: Payload bytes of the fixed-size value types: u8 i8 u16 i16 u32 i32 f32 bool u64 i64 f64.
_FIXED = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_MAX_DEPTH = 4  # nested arrays deeper than this are treated as malformed


class _HeaderReader:
    """Reads little-endian GGUF fields from a binary file, refusing to run past its end."""

    def __init__(self, f: IO[bytes], size: int, path: Path) -> None:
        self.f, self.size, self.path = f, size, path

    def take(self, n: int) -> bytes:
        data = self.f.read(n)
        if len(data) != n:
            raise GGUFHeaderError(f"{self.path}: the GGUF header is truncated")
        return data

    def skip(self, n: int) -> None:
        if self.f.tell() + n > self.size:
            raise GGUFHeaderError(f"{self.path}: a GGUF metadata value runs past the end")
        self.f.seek(n, os.SEEK_CUR)

    def u32(self) -> int:
        value: int = struct.unpack("<I", self.take(4))[0]
        return value

    def u64(self) -> int:
        value: int = struct.unpack("<Q", self.take(8))[0]
        return value

    def string(self) -> str:
        n = self.u64()
        if self.f.tell() + n > self.size:
            raise GGUFHeaderError(f"{self.path}: a GGUF string runs past the end")
        try:
            return self.take(n).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise GGUFHeaderError(f"{self.path}: a GGUF string is not UTF-8") from exc

    def skip_value(self, kind: int, depth: int = 0) -> None:
        if kind in _FIXED:
            self.skip(_FIXED[kind])
        elif kind == _STRING:
            self.skip(self.u64())
        elif kind == _ARRAY and depth < _MAX_DEPTH:
            element, count = self.u32(), self.u64()
            if element in _FIXED:
                self.skip(_FIXED[element] * count)
            else:
                for _ in range(count):
                    self.skip_value(element, depth + 1)
        else:
            raise GGUFHeaderError(f"{self.path}: unknown GGUF value type {kind}")


def read_metadata_string(path: Path, key: str) -> str | None:
    """Return the string value of metadata ``key`` in a GGUF file, or ``None`` if absent.

    Raises:
        GGUFHeaderError: the file is not GGUF v2/v3, is truncated, or ``key`` holds no string.

    """
    with open(path, "rb") as f:
        reader = _HeaderReader(f, os.fstat(f.fileno()).st_size, path)
        magic = f.read(4)
        if magic != b"GGUF":
            raise GGUFHeaderError(f"{path} is not a GGUF file (it starts with {magic!r})")
        version = reader.u32()
        if version not in (2, 3):  # v1 had 32-bit counts; a big-endian file reads as 2**24+
            raise GGUFHeaderError(f"{path}: GGUF version {version} is not supported (2 or 3)")
        reader.u64()  # tensor count
        for _ in range(reader.u64()):
            name = reader.string()
            kind = reader.u32()
            if name == key:
                if kind != _STRING:
                    raise GGUFHeaderError(f"{path}: {key} has GGUF type {kind}, not a string")
                return reader.string()
            reader.skip_value(kind)
    return None


def read_general_name(path: Path) -> str | None:
    """Return the ``general.name`` of a GGUF file (``None`` if the header has none)."""
    return read_metadata_string(path, "general.name")
