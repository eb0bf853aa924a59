"""One sandboxed call on the parent's side: start the child, serve it, kill it, reap it.

The parent sends the ``run`` message, serves the child's encoder requests with its own
(metered) ``encode_fn`` and ``index_time`` scopes, keeps the child's output, enforces the wall
time of the whole call (the program's own compute and the encodes the parent serves for it:
a program that floods the encoder with small requests is held to the same clock as one that
loops), the encoder budget in texts and the size of every message, then kills the child's
process group and reaps it. What happened is recorded in a
:class:`~embedding_ttc.program_files.sandbox.verdict.Verdict`, which judges the outcome.
"""

from __future__ import annotations

import json
import math
import os
import selectors
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from embedding_ttc.program_files.sandbox.limits import (
    PIECE_SECONDS,
    SERVE_PIECE,
    SandboxLimits,
    child_env,
    cpu_limit,
)
from embedding_ttc.program_files.sandbox.reaping import drain, kill_and_reap
from embedding_ttc.program_files.sandbox.served import ServedInputs
from embedding_ttc.program_files.sandbox.verdict import Spent, Verdict
from embedding_ttc.program_files.sandbox.wire import (
    MAX_HEADER_BYTES,
    Frame,
    FrameReader,
    ProtocolError,
    array_chunk,
    frame_prefix,
)
from embedding_ttc.programs.base import Context, Matrix

CHILD_MODULE = "embedding_ttc.program_files.sandbox.child"
"""The child's module, run as ``python -m`` in a fresh process for every call."""

MAX_INDEX_DEPTH = 32
"""How deeply a child may nest ``ctx.index_time()`` scopes."""

WAKE_SECONDS = 1.0
"""The longest the parent waits on a silent child before it looks again.

An exception raised in the parent's thread from outside (Ray's cancellation of a running task
raises ``KeyboardInterrupt`` this way) is delivered only between bytecodes, not during a
blocking ``select``; waking at least this often delivers it within a second, and the parent's
``finally`` then kills the child, instead of at the end of the child's wall time.
"""

SAFE_PATH: tuple[str, ...] = ("-P",) if sys.version_info >= (3, 11) else ()
"""``-P``: the working directory is not put on the child's ``sys.path``. The flag is new in
Python 3.11; on 3.10 the child removes that entry itself (:func:`.child.drop_working_directory`)."""


def run_message(
    source: str, name: str, Q: Matrix, D: Matrix, S: Matrix, ctx: Context, settings: dict[str, Any]
) -> list[bytes | memoryview]:
    """The ``run`` message: header (source, texts, settings, array specs) and array bytes."""
    arrays: list[tuple[str, Any]] = [("Q", Q), ("D", D), ("S", S)]
    lengths: list[int] | None = None
    if ctx.candidates is not None:
        parts = [np.asarray(c, dtype=np.int64).reshape(-1) for c in ctx.candidates]
        lengths = [len(p) for p in parts]
        flat = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        arrays.append(("candidates", flat))
    specs, chunks = [], []
    for key, value in arrays:
        spec, chunk = array_chunk(value, key)
        specs.append(spec)
        chunks.append(chunk)
    header = {
        "kind": "run",
        "name": name,
        "source": source,
        "texts": {
            "query_texts": list(ctx.query_texts),
            "query_ids": list(ctx.query_ids),
            "doc_ids": list(ctx.doc_ids),
        },
        "doc_count": len(ctx.doc_texts),  # the texts themselves on request (texts)
        # A deployed call's primitives over the documents are served (sandbox.served).
        "served": ctx.deployed is not None,
        "views_collapsed": bool(ctx.views_collapsed),
        "candidates": lengths,
        "arrays": specs,
        "settings": settings,
    }
    return [frame_prefix(header, sum(c.nbytes for c in chunks)), *chunks]


class _Outbox:
    """Bytes waiting to be written to the child, without copying large arrays."""

    def __init__(self) -> None:
        self.chunks: list[memoryview] = []

    def put(self, chunks: Sequence[bytes | memoryview]) -> None:
        self.chunks.extend(memoryview(c).cast("B") for c in chunks if memoryview(c).nbytes)

    def write(self, fd: int) -> None:
        while self.chunks:
            n = os.write(fd, self.chunks[0][: 1 << 20])
            if n < len(self.chunks[0]):
                self.chunks[0] = self.chunks[0][n:]
                return
            self.chunks.pop(0)


class Session:
    """One call: start the child, serve its messages, kill it, judge the outcome."""

    def __init__(
        self,
        source: str,
        name: str,
        limits: SandboxLimits,
        ctx: Context,
        spent: Spent | None = None,
    ) -> None:
        self.source = source
        self.name = name
        self.limits = limits
        self.ctx = ctx
        # The run's clock and the encodes served so far: this call's alone, or those of the
        # run it belongs to (shortlist batches share one, started by the first call).
        self.spent = spent if spent is not None else Spent()
        self.verdict = Verdict(name, limits, spent=self.spent)
        self.outbox = _Outbox()
        self.served = ServedInputs(ctx)
        self.scopes: list[AbstractContextManager[None]] = []
        self.charged = 0  # texts charged to this call's encoder budget
        self.seconds_per_text: float | None = None  # the encoder's rate at the last piece
        self.text_budget = limits.encode_text_budget(len(ctx.query_texts), len(ctx.doc_texts))

    def run(self, Q: Matrix, D: Matrix, S: Matrix) -> Matrix:
        """Run the program on these inputs in a fresh child; its matrix, or a failure."""
        if not self.spent.start:
            self.spent.start = time.monotonic()
        self.verdict.shape = (int(S.shape[0]), int(S.shape[1]))
        with tempfile.TemporaryDirectory(prefix="ettc-sandbox-") as workdir:
            settings = {
                "memory_bytes": int(self.limits.memory_bytes),
                "cpu_seconds": math.ceil(cpu_limit(self.limits)),
                "open_files": int(self.limits.open_files),
                "isolate_network": self.limits.isolate_network,
                "drop_privileges": self.limits.drop_privileges,
                "workdir": workdir,
            }
            request = run_message(self.source, self.name, Q, D, S, self.ctx, settings)
            self._spawn_and_serve(workdir, request)
        return self.verdict.judge()

    def _spawn_and_serve(self, workdir: str, request: list[bytes | memoryview]) -> None:
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        label = "".join(c for c in self.name if c.isprintable())[:80] or "program"
        argv = [sys.executable, "-B", "-s", *SAFE_PATH, "-X", "faulthandler", "-m", CHILD_MODULE]
        try:
            proc = subprocess.Popen(
                [*argv, str(to_child_r), str(from_child_w), label],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=workdir,
                env=child_env(self.limits, workdir),
                pass_fds=(to_child_r, from_child_w),
                start_new_session=True,
            )
        except BaseException:
            for fd in (to_child_r, to_child_w, from_child_r, from_child_w):
                os.close(fd)
            raise
        os.close(to_child_r)
        os.close(from_child_w)
        assert proc.stdout is not None  # stdout=PIPE
        grace = 0.0
        try:
            self.outbox.put(request)
            self._serve(proc, to_child_w, from_child_r, proc.stdout.fileno())
            if self.verdict.closed:
                grace = 2.0  # the child is exiting: let it, for its exit status
        finally:
            try:
                self._reap(proc, grace)
                self._drain(proc.stdout.fileno(), 0.5 if grace else 0.0)
            finally:
                for cm in reversed(self.scopes):
                    cm.__exit__(None, None, None)
                self.scopes.clear()
                proc.stdout.close()
                os.close(to_child_w)
                os.close(from_child_r)

    def _payload_limit(self, header: dict[str, Any]) -> int:
        kind = header["kind"]
        if kind == "result":
            return 16 * self.verdict.shape[0] * self.verdict.shape[1]
        if kind in ("encode", "bm25"):
            return self.limits.message_bytes
        if kind in ("error", "violation"):
            return 1 << 16
        return 0

    def serve(
        self, proc: subprocess.Popen[bytes], to_child: int, from_child: int, out: int
    ) -> None:
        """Serve a child already running (a warm one) until this call ends, on this call's clock.

        The clock starts now unless the run it belongs to started it; the limits, messages and
        verdict are those of a call in a fresh child.
        """
        if not self.spent.start:
            self.spent.start = time.monotonic()
        self._serve(proc, to_child, from_child, out)

    def _serve(
        self, proc: subprocess.Popen[bytes], to_child: int, from_child: int, out: int
    ) -> None:
        for fd in (to_child, from_child, out):
            os.set_blocking(fd, False)
        reader = FrameReader(max_header=MAX_HEADER_BYTES, payload_limit=self._payload_limit)
        with selectors.DefaultSelector() as sel:
            sel.register(from_child, selectors.EVENT_READ, "protocol")
            sel.register(out, selectors.EVENT_READ, "output")
            writing = False
            while not self.verdict.finished:
                if self.outbox.chunks and not writing:
                    sel.register(to_child, selectors.EVENT_WRITE, "input")
                    writing = True
                remaining = self._remaining()
                if remaining <= 0:
                    self._time_out()
                    break
                for key, _ in sel.select(timeout=min(remaining, WAKE_SECONDS)):
                    if key.data == "protocol":
                        self._read_protocol(from_child, reader)
                    elif key.data == "output":
                        self._read_output(sel, out)
                    elif key.data == "input":
                        self._write_input(to_child)
                    if self.verdict.finished:
                        break
                if writing and not self.outbox.chunks:
                    sel.unregister(to_child)
                    writing = False

    def _read_protocol(self, fd: int, reader: FrameReader) -> None:
        try:
            data = os.read(fd, 1 << 20)
        except BlockingIOError:
            return
        if not data:
            self.verdict.closed = True
            return
        try:
            for frame in reader.feed(data):
                self._handle(frame)
                if self.verdict.finished:
                    return
        except ProtocolError as exc:
            self.verdict.protocol = str(exc)

    def _read_output(self, sel: selectors.BaseSelector, fd: int) -> None:
        try:
            data = os.read(fd, 1 << 16)
        except BlockingIOError:
            return
        if not data:
            sel.unregister(fd)  # the child closed its stdout; it may still be running
            return
        self.verdict.output.add(data)
        if self.verdict.output.total > self.limits.output_bytes:
            self.verdict.overflow = True

    def _write_input(self, fd: int) -> None:
        try:
            self.outbox.write(fd)
        except BlockingIOError:
            return
        except BrokenPipeError:
            self.outbox.chunks.clear()  # the child is gone; its exit says why

    def _handle(self, frame: Frame) -> None:
        kind = frame.header["kind"]
        if kind == "encode":
            self._encode(frame)
        elif kind == "texts":
            try:
                texts = self.served.texts(_unit(frame.header))
            except ValueError as exc:
                raise ProtocolError(f"a texts request is malformed ({exc})") from None
            payload = json.dumps(list(texts), ensure_ascii=False).encode("utf-8")
            self.outbox.put([frame_prefix({"kind": "texts"}, len(payload)), payload])
        elif kind in ("bm25", "chunks"):
            self._serve_primitive(frame)
        elif kind == "index_enter":
            if len(self.scopes) >= MAX_INDEX_DEPTH:
                raise ProtocolError(f"index_time() nested more than {MAX_INDEX_DEPTH} deep")
            scope = self.ctx.index_time()
            scope.__enter__()
            self.scopes.append(scope)
        elif kind == "index_exit":
            if self.scopes:
                self.scopes.pop().__exit__(None, None, None)
        elif kind == "violation":
            event, _, detail = bytes(frame.payload).decode("utf-8", "replace").partition("\n")
            self.verdict.violations.append((event[:200], detail[:500]))
        elif kind == "result":
            self.verdict.result = frame
        elif kind == "error":
            self.verdict.error = frame
        else:
            raise ProtocolError(f"unknown message kind {kind[:40]!r}")

    def _serve_primitive(self, frame: Frame) -> None:
        """Answer a served primitive's request (``bm25``, ``chunks``) with its array.

        Only a deployed call's child sends them (:mod:`.served`); an error computing the
        answer is sent back for the program to see, as an encoder's is.
        """
        header = frame.header
        kind = header["kind"]
        if not self.served.deployed:
            raise ProtocolError(f"a {kind!r} request in a call whose primitives are not served")
        try:
            if kind == "bm25":
                queries = _texts_of(frame.payload, "utf-8", header.get("count"))
                answer = np.ascontiguousarray(self.served.bm25(queries), dtype=np.float32)
            else:
                chunks = self.served.chunks(header.get("unit"), header.get("max_per_doc"))
                answer = np.ascontiguousarray(chunks.owner, dtype=np.int64)
        except ProtocolError:
            raise
        except Exception as exc:
            message = str(exc)[:2000]
            reply = {"kind": "served_error", "type": type(exc).__name__, "message": message}
            self.outbox.put([frame_prefix(reply)])
            return
        spec, chunk = array_chunk(answer, kind)
        reply = {"kind": kind, "shape": spec["shape"], "dtype": spec["dtype"]}
        self.outbox.put([frame_prefix(reply, chunk.nbytes), chunk])

    def _encode(self, frame: Frame) -> None:
        """Serve one encoder request with the parent's (metered) ``encode_fn``.

        The texts are the request's, or those it names (``unit``: texts the parent holds,
        :mod:`.served`), whose stored rows serve them when a deployed call has them.
        """
        header = frame.header
        options = header.get("options")
        if not isinstance(options, dict) or not set(options) <= {"view", "dim", "max_length"}:
            raise ProtocolError("an encode request is malformed")
        unit = header.get("unit")
        try:
            if unit is None:
                texts: Sequence[str] = _texts_of(frame.payload, "ascii", header.get("count"))
            else:
                texts = self.served.texts(_unit(header))
                if header.get("count") != len(texts):
                    raise ProtocolError("an encode request names texts it does not count")
        except ValueError as exc:
            raise ProtocolError(f"an encode request is malformed ({exc})") from None
        if self._over_budget(len(texts)):
            return
        self.spent.calls += 1
        try:
            emb = self._stored(unit, options) if unit is not None else None
            if emb is None:
                emb = self._encode_in_pieces(list(texts), options)
        except Exception as exc:
            message = str(exc)[:2000]
            self.verdict.encode_failures.append(f"{type(exc).__name__}: {message}")
            reply = {"kind": "encode_error", "type": type(exc).__name__, "message": message}
            self.outbox.put([frame_prefix(reply)])
            return
        if emb is None:  # the deadline passed between two pieces
            return
        spec, chunk = array_chunk(emb, "embeddings")
        reply = {"kind": "embeddings", "shape": spec["shape"], "dtype": spec["dtype"]}
        self.outbox.put([frame_prefix(reply, chunk.nbytes), chunk])

    def _stored(self, unit: dict[str, Any], options: dict[str, Any]) -> Any:
        """The stored rows of the texts ``unit`` names, timed as an encode, or ``None``."""
        t0 = time.monotonic()
        try:
            emb = self.served.stored(unit, options)
        finally:
            self.spent.serving += time.monotonic() - t0
        if emb is not None:
            self.spent.encoded += len(emb)
        return emb

    def _encode_in_pieces(self, texts: list[str], options: dict[str, Any]) -> Any:
        """The embeddings of ``texts``, or ``None`` when the deadline passed before the end.

        A request is encoded in pieces sized to take about :data:`PIECE_SECONDS` at the
        rate of the last piece (:data:`SERVE_PIECE`), the deadline checked before each: one
        request of a million texts cannot hold the parent past the call's limit by much more
        than a piece. The pieces go through the same metered encoder, which counts texts,
        not calls, so the cost recorded is the same.
        """
        pieces: list[Any] = []
        start = 0
        while start < len(texts) or not pieces:
            if self._remaining() <= 0:
                self._time_out()
                return None
            piece = texts[start : start + self._piece_size()]
            t0 = time.monotonic()
            try:
                pieces.append(np.ascontiguousarray(self.ctx.encode_fn(piece, **options)))
            finally:
                seconds = time.monotonic() - t0
                self.spent.serving += seconds
            if piece:
                self.seconds_per_text = seconds / len(piece)
            self.spent.encoded += len(piece)
            start += len(piece)
        return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)

    def _piece_size(self) -> int:
        """Texts in the next piece: about :data:`PIECE_SECONDS` at the last piece's rate."""
        fewest, most = SERVE_PIECE
        if self.seconds_per_text is None:
            return fewest
        return max(fewest, min(most, int(PIECE_SECONDS / max(self.seconds_per_text, 1e-9))))

    def _remaining(self) -> float:
        """Seconds left before the call's wall-time limit (see ``timeout_covers``)."""
        elapsed = time.monotonic() - self.spent.start
        if self.limits.timeout_covers == "program":  # older runs: encodes served not counted
            elapsed -= self.spent.serving
        return self.limits.wall_seconds - elapsed

    def _time_out(self) -> None:
        self.spent.elapsed = time.monotonic() - self.spent.start
        self.verdict.timed_out = True

    def _over_budget(self, n_texts: int) -> bool:
        """Charge ``n_texts`` to the encoder budget; a request beyond it ends the run."""
        limits, spent = self.limits, self.spent
        if self.charged + n_texts > self.text_budget:
            self.verdict.over_budget = (
                f"the program asked the encoder for more than {self.text_budget} texts "
                f"({limits.encode_texts_per_item:g} per query and document; "
                f"{self.charged} encoded, {n_texts} more requested)"
            )
        elif spent.serving > limits.encode_seconds:
            self.verdict.over_budget = (
                f"the program's encoder calls took more than {limits.encode_seconds:g} s "
                f"({spent.serving:.0f} s for {spent.encoded} texts)"
            )
        else:
            self.charged += n_texts
        return self.verdict.over_budget is not None

    def _reap(self, proc: subprocess.Popen[bytes], grace: float) -> None:
        """Wait up to ``grace`` seconds for the child to exit, kill its group, reap it."""
        reaped = kill_and_reap(proc, grace)
        self.verdict.killed = reaped.killed
        if reaped.returncode is None:
            return
        self.verdict.returncode = reaped.returncode
        self.verdict.max_rss = reaped.max_rss
        self.verdict.cpu_seconds = reaped.cpu_seconds

    def _drain(self, fd: int, seconds: float) -> None:
        """Read what the dead child left in its output pipe (bounded in time)."""
        drain(fd, self.verdict.output, self.limits.output_bytes, seconds)


def _unit(header: dict[str, Any]) -> dict[str, Any]:
    """A request's ``unit`` (the texts it names), checked for shape only."""
    unit = header.get("unit")
    if not isinstance(unit, dict) or not isinstance(unit.get("unit"), str):
        raise ProtocolError("a request names its texts by a malformed unit")
    return unit


def _texts_of(payload: bytes | bytearray, encoding: str, count: object) -> list[str]:
    """The JSON list of ``count`` strings a request carries.

    Raises:
        ProtocolError: anything else.

    """
    try:
        texts = json.loads(bytes(payload).decode(encoding))
    except (ValueError, RecursionError):
        raise ProtocolError(f"a request's texts are not {encoding} JSON") from None
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise ProtocolError("a request's texts are not a list of strings")
    if count != len(texts):
        raise ProtocolError("a request's texts are not as many as it says")
    return texts
