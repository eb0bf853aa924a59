"""The wire format the sandbox's parent and child speak: frames, headers and raw arrays.

A *frame* is a 16-byte prefix ``MAGIC | header length (u32) | payload length (u64)``
(big-endian), a UTF-8 JSON object (the header, with a string ``kind``) and raw payload bytes.
Arrays travel as a header ``{"dtype": "<f4", "shape": [n, d]}`` plus their bytes; the parent
checks every length against its limits *before* reading, and the size of an array against its
declared shape before ``np.frombuffer``. Nothing is ever unpickled.

Child → parent: ``encode`` (payload: JSON list of texts; or none, its ``unit`` naming texts
the parent holds: the documents, or their chunks), ``texts`` (the first time the program reads
the texts of a ``unit``: ``ctx.doc_texts``, ``ctx.doc_lengths``, or served chunks), for a
deployed call's served primitives ``bm25`` (payload: JSON list of query texts) and ``chunks``
(a granularity and the chunks kept per document;
:mod:`~embedding_ttc.program_files.sandbox.served`), ``index_enter`` / ``index_exit``,
``violation`` (payload: ``event`` newline ``detail``, sent by the audit hook before it raises),
and finally one ``result`` (an array, or the type of a non-array) or ``error`` (payload: the
message and traceback). Parent → child: one ``run`` (the source, query texts, ids, the number
of documents, whether its primitives are served, settings and the arrays), then one
``embeddings`` or ``encode_error`` per ``encode``, one ``texts`` (payload: JSON list) per
``texts``, and one array of the request's kind (``bm25`` scores, ``chunks`` owners) or
``served_error`` per served primitive.

The child imports this module before it contains itself, so it imports nothing heavy: numpy
is imported inside the array functions, after the child has left the network.
"""

from __future__ import annotations

import json
import os
import re
import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MAGIC = b"ETC1"
PREFIX = struct.Struct(">4sIQ")
"""Frame prefix: magic, header length, payload length."""

MAX_HEADER_BYTES = 1 << 16
"""The largest header the parent reads from the child."""

EXIT_MEMORY = 87
"""Exit code of a child that ran out of memory while reporting."""

EXIT_INTERNAL = 88
"""Exit code of a child whose harness failed before it could report."""

REFUSED_IMPORT = "sandbox: import of '"
"""How the message of a ``ModuleNotFoundError`` raised by the audit hook starts."""

ARRAY_DTYPE = re.compile(r"[<>|=][biufc](1|2|4|8|16)")
"""The array dtypes sent either way (``numpy.dtype.str`` of numbers and booleans)."""


class ProtocolError(Exception):
    """The other side sent bytes that are not a well-formed frame within the limits."""


@dataclass(frozen=True)
class Frame:
    """One message: a JSON header and the raw payload that follows it."""

    header: dict[str, Any]
    payload: bytes | bytearray


def frame_prefix(header: Mapping[str, Any], payload_bytes: int = 0) -> bytes:
    """The prefix and header of a frame whose payload of ``payload_bytes`` follows."""
    head = json.dumps(header, separators=(",", ":")).encode("utf-8")
    return PREFIX.pack(MAGIC, len(head), payload_bytes) + head


class FrameReader:
    """Incremental frame parser that checks every length before it buffers anything.

    Args:
        max_header: the largest header accepted.
        payload_limit: the largest payload accepted for a given header (called once the
            header is parsed, before any payload byte is buffered); ``None`` accepts any.

    """

    def __init__(
        self,
        *,
        max_header: int = MAX_HEADER_BYTES,
        payload_limit: Callable[[dict[str, Any]], int] | None = None,
    ) -> None:
        self.max_header = max_header
        self.payload_limit = payload_limit
        self._head = bytearray()
        self._header_len: int | None = None
        self._payload_len = 0
        self._header: dict[str, Any] | None = None
        self._payload = bytearray()
        self._filled = 0

    def feed(self, data: bytes | bytearray | memoryview) -> list[Frame]:
        """Consume ``data``; return the frames it completed (raises :class:`ProtocolError`)."""
        frames: list[Frame] = []
        view = memoryview(data)
        while True:
            if self._header is None:
                view = self._take_head(view)
            if self._header is not None:
                take = min(len(self._payload) - self._filled, len(view))
                self._payload[self._filled : self._filled + take] = view[:take]
                self._filled += take
                view = view[take:]
                if self._filled == len(self._payload):
                    frames.append(Frame(self._header, self._payload))
                    self._reset()
                    continue
            if not view:
                return frames

    def _reset(self) -> None:
        self._head = bytearray()
        self._header_len = None
        self._header = None
        self._payload = bytearray()
        self._filled = 0

    def _take_head(self, view: memoryview) -> memoryview:
        need = PREFIX.size + (self._header_len or 0)
        take = min(need - len(self._head), len(view))
        self._head += view[:take]
        view = view[take:]
        if self._header_len is None and len(self._head) == PREFIX.size:
            magic, header_len, payload_len = PREFIX.unpack(bytes(self._head))
            if magic != MAGIC:
                raise ProtocolError(f"a frame starts with {magic!r}, not {MAGIC!r}")
            if header_len > self.max_header:
                raise ProtocolError(
                    f"a header of {header_len} bytes was announced; the limit is {self.max_header}"
                )
            self._header_len, self._payload_len = header_len, payload_len
            if header_len:
                return self._take_head(view)
        if self._header_len is not None and len(self._head) == PREFIX.size + self._header_len:
            self._header = self._parse_header(bytes(self._head[PREFIX.size :]))
        return view

    def _parse_header(self, raw: bytes) -> dict[str, Any]:
        try:
            header = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError) as exc:
            raise ProtocolError(f"a header is not valid UTF-8 JSON ({exc})") from None
        if not isinstance(header, dict) or not isinstance(header.get("kind"), str):
            raise ProtocolError("a header is not a JSON object with a string 'kind'")
        limit = self.payload_limit(header) if self.payload_limit is not None else None
        if limit is not None and self._payload_len > limit:
            raise ProtocolError(
                f"a message of kind {header['kind']!r} announced a payload of "
                f"{self._payload_len} bytes; the limit is {limit}"
            )
        self._payload = bytearray(self._payload_len)
        return header


def write_all(fd: int, chunks: Iterable[bytes | bytearray | memoryview]) -> None:
    """Write every chunk to a blocking file descriptor."""
    for chunk in chunks:
        view = memoryview(chunk).cast("B")
        while view:
            view = view[os.write(fd, view) :]


def array_chunk(arr: Any, name: str) -> tuple[dict[str, Any], memoryview]:
    """An array's header spec (name, dtype, shape) and its bytes, without a copy when possible.

    Raises:
        TypeError: for a dtype other than :data:`ARRAY_DTYPE`'s.

    """
    import numpy as np

    a = np.ascontiguousarray(arr)
    if not ARRAY_DTYPE.fullmatch(a.dtype.str):
        raise TypeError(f"cannot send {name} of dtype {a.dtype} to the sandbox")
    return {"name": name, "dtype": a.dtype.str, "shape": list(a.shape)}, a.reshape(-1).view(
        np.uint8
    ).data


def decode_arrays(specs: Sequence[Mapping[str, Any]], payload: bytes | bytearray) -> dict[str, Any]:
    """The arrays of a payload that holds them one after another, as ``specs`` declare them."""
    import numpy as np

    arrays: dict[str, Any] = {}
    offset = 0
    for spec in specs:
        dtype = np.dtype(spec["dtype"])
        count = 1
        for n in spec["shape"]:
            count *= n
        arrays[spec["name"]] = np.frombuffer(
            payload, dtype=dtype, count=count, offset=offset
        ).reshape(spec["shape"])
        offset += count * dtype.itemsize
    return arrays
