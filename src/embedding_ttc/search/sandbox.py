"""Run a program file in a separate, contained process: the search's sandbox.

Code written by a language model runs here. Static checks (:mod:`~embedding_ttc.search.checks`)
reject most bad programs early, but they are not a sandbox; the layers that contain a program
are these, all applied on every call of a :class:`SandboxedProgram`:

* **A fresh process** per call (``python -B -s -P -m embedding_ttc.search._child``) in its own
  session, so the parent can kill its whole process group; started with an environment
  built from nothing (no variable of the parent leaks; ``PYTHONHASHSEED=0`` makes string
  hashing, hence set order, the same on every run), in a fresh temporary working directory
  that is removed afterwards. ``-I`` is not used because it would ignore ``PYTHONHASHSEED``;
  its other parts (``-s``, ``-P``) are, and the environment is ours anyway.
* **A protocol on dedicated pipes** (``pass_fds``), not stdout: printing cannot corrupt it.
  The parent never unpickles what the child sends: JSON headers and raw array bytes whose
  lengths are checked against a limit before anything is buffered (:mod:`._child`).
* **Limits the child sets on itself** before the program's first line: a new network
  namespace when the kernel allows it, ``RLIMIT_AS`` (memory), ``RLIMIT_CPU``,
  ``RLIMIT_FSIZE`` = 0, ``RLIMIT_CORE`` = 0, ``RLIMIT_NOFILE``, ``RLIMIT_NPROC`` = 0; a child
  started as root becomes ``nobody``; then an audit hook refuses file writes, reads outside
  the working directory, processes, signals, sockets, ``ctypes``, environment changes and
  every other event outside a short allow-list, reporting each attempt to the parent before
  it raises (status ``rejected``, even if the program catches the error). New imports fail
  with ``ModuleNotFoundError`` without a report (libraries probe optional modules inside
  ``try``); a program that lets one escape is ``rejected`` too.
* **Limits the parent enforces**: wall time (the group is killed; encoder calls served by
  the parent do not count), the bytes printed to stdout/stderr, the size of every message.

What this does **not** contain: a program that corrupts memory (numpy's ``as_strided`` or
``ndarray(buffer=...)``, crafted bytecode) runs native code that no audit hook sees; it is
then held only by the process boundary, the rlimits, the network namespace and the
unprivileged user (when the parent runs as root; otherwise the child has the parent's user
and can read, natively, what that user can read). Without ``unshare`` permission there is no
network namespace. There is no seccomp filter, no mount namespace and no cgroup:
``RLIMIT_AS`` bounds address space, not resident memory. A program can also write a
well-formed result frame itself and exit: that is no worse than returning that matrix.
"""

from __future__ import annotations

import json
import math
import os
import re
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.evaluation.evaluate import ProgramOutputError, check_output
from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.search._child import (
    EXIT_INTERNAL,
    EXIT_MEMORY,
    MAX_HEADER_BYTES,
    REFUSED_IMPORT,
    Frame,
    FrameReader,
    ProtocolError,
    frame_prefix,
)
from embedding_ttc.search.checks import check_source
from embedding_ttc.search.interface import ALLOWED_MODULES, CandidateError, Status

CHILD_MODULE = "embedding_ttc.search._child"

REASON_BYTES = 4000
"""The longest failure reason (message, traceback tail, output tail)."""

OUTPUT_HEAD_BYTES = 1024
OUTPUT_TAIL_BYTES = 3072
"""How much of the child's output is kept for a failure reason: the start and the end."""

MAX_INDEX_DEPTH = 32
"""How deeply a child may nest ``ctx.index_time()`` scopes."""

_DTYPE = re.compile(r"[<>|=][biufc](1|2|4|8|16)")
"""The array dtypes accepted from a child (``numpy.dtype.str`` of numbers and booleans)."""


@dataclass(frozen=True)
class SandboxLimits:
    """What one sandboxed call may use.

    Attributes:
        wall_seconds: wall time of the child, from start to result, minus the time the parent
            spends serving its encoder calls. Exceeded: the group is killed, ``timeout``.
        memory_bytes: ``RLIMIT_AS`` of the child: its whole address space, interpreter and
            numpy included (about 150 MB before the program starts; more with scipy or many
            BLAS threads). Exceeded: ``MemoryError`` in the program, ``memory``.
        output_bytes: stdout and stderr the child may print together; beyond, it is killed
            (``crashed``).
        cpu_seconds: ``RLIMIT_CPU`` (all threads together); ``None``: ``wall_seconds`` times
            the number of BLAS threads, plus 5. Exceeded: ``SIGXCPU``, ``timeout``.
        message_bytes: the largest encoder request the parent reads from the child (the texts
            as JSON); a larger announced message kills the child (``crashed``).
        open_files: ``RLIMIT_NOFILE`` of the child.
        threads: BLAS / OpenMP threads in the child; ``None``: the parent's
            ``OMP_NUM_THREADS`` / ``OPENBLAS_NUM_THREADS``, else 1.
        isolate_network: put the child in an empty network namespace when permitted.
        drop_privileges: when the parent is root, run the program as ``nobody``.

    """

    wall_seconds: float = 600.0
    memory_bytes: int = 8 * 2**30
    output_bytes: int = 1 << 20
    cpu_seconds: float | None = None
    message_bytes: int = 1 << 30
    open_files: int = 64
    threads: int | None = None
    isolate_network: bool = True
    drop_privileges: bool = True

    def __post_init__(self) -> None:
        positive = {
            "wall_seconds": self.wall_seconds,
            "memory_bytes": self.memory_bytes,
            "output_bytes": self.output_bytes,
            "message_bytes": self.message_bytes,
            "open_files": self.open_files,
        }
        if self.cpu_seconds is not None:
            positive["cpu_seconds"] = self.cpu_seconds
        if self.threads is not None:
            positive["threads"] = self.threads
        for name, value in positive.items():
            if not value > 0:
                raise ValueError(f"SandboxLimits.{name} must be positive, got {value!r}")


DEFAULT_LIMITS = SandboxLimits()


class SandboxFailure(CandidateError):
    """A sandboxed program did not return a valid matrix.

    Its ``status`` is ``timeout``, ``memory``, ``crashed``, ``invalid_output`` or ``rejected``;
    for a crash its ``reason`` ends with the last lines of the child's traceback or output (at
    most :data:`REASON_BYTES` characters in all).
    """


class SandboxedProgram:
    """A program file's source, run in a fresh contained process on every call.

    Construction runs no static check (see :func:`load_program_file` for that), so tests can
    hand hostile code straight to the containment.

    Args:
        source: the program file's text (defines ``program(Q, D, S, ctx)``).
        name: the program's name (in records, error messages and the child's command line).
        limits: the limits of every call.

    """

    def __init__(self, source: str, name: str, limits: SandboxLimits = DEFAULT_LIMITS) -> None:
        self.source = source
        self.name = name
        self.limits = limits

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """Run the program in a child process; raise :class:`SandboxFailure` if it fails."""
        return _Session(self.source, self.name, self.limits, ctx).run(Q, D, S)

    def __repr__(self) -> str:
        return f"SandboxedProgram(name={self.name!r}, limits={self.limits!r})"


def run_source(
    source: str,
    Q: Matrix,
    D: Matrix,
    S: Matrix,
    ctx: Context,
    limits: SandboxLimits = DEFAULT_LIMITS,
    *,
    name: str = "program",
) -> Matrix:
    """Run a program's source once in the sandbox (no static checks) and return its matrix."""
    return SandboxedProgram(source, name, limits)(Q, D, S, ctx)


def load_program_file(
    path: Path, *, limits: SandboxLimits = DEFAULT_LIMITS, task_names: Iterable[str] = ()
) -> SandboxedProgram:
    """Read a program file, check it statically, and wrap it for sandboxed calls.

    Raises:
        EmbeddingTTCError: the file cannot be read.
        ProgramRejected: a static check failed (its ``reason`` names the constraint).

    """
    try:
        source = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise EmbeddingTTCError(f"program file {path} is not UTF-8 text ({exc})") from None
    except OSError as exc:
        raise EmbeddingTTCError(f"cannot read program file {path}: {exc.strerror}") from None
    check_source(source, task_names=task_names)
    return SandboxedProgram(source, Path(path).stem, limits)


def _threads(limits: SandboxLimits) -> dict[str, str]:
    if limits.threads is not None:
        n = str(limits.threads)
        return {"OMP_NUM_THREADS": n, "OPENBLAS_NUM_THREADS": n, "MKL_NUM_THREADS": n}
    omp = os.environ.get("OMP_NUM_THREADS") or "1"
    return {
        "OMP_NUM_THREADS": omp,
        "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS") or omp,
        "MKL_NUM_THREADS": os.environ.get("MKL_NUM_THREADS") or omp,
    }


def _child_env(limits: SandboxLimits, workdir: str) -> dict[str, str]:
    """The child's whole environment: nothing is inherited from the parent."""
    return {
        "PATH": os.defpath,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": workdir,
        "TMPDIR": workdir,
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        **_threads(limits),
    }


def _cpu_seconds(limits: SandboxLimits) -> float:
    if limits.cpu_seconds is not None:
        return limits.cpu_seconds
    try:
        threads = max(int(_threads(limits)["OPENBLAS_NUM_THREADS"]), 1)
    except ValueError:
        threads = 1
    return limits.wall_seconds * threads + 5.0


def _array_chunk(arr: Any, name: str) -> tuple[dict[str, Any], memoryview]:
    a = np.ascontiguousarray(arr)
    if not _DTYPE.fullmatch(a.dtype.str):
        raise TypeError(f"cannot send {name} of dtype {a.dtype} to the sandbox")
    return {"name": name, "dtype": a.dtype.str, "shape": list(a.shape)}, a.reshape(-1).view(
        np.uint8
    ).data


def _request(
    source: str, name: str, Q: Matrix, D: Matrix, S: Matrix, ctx: Context, settings: dict[str, Any]
) -> list[bytes | memoryview]:
    """The ``run`` message: header (source, texts, settings, array specs) and array bytes."""
    arrays: list[tuple[str, Any]] = [("Q", Q), ("D", D), ("S", S), ("doc_lengths", ctx.doc_lengths)]
    lengths: list[int] | None = None
    if ctx.candidates is not None:
        parts = [np.asarray(c, dtype=np.int64).reshape(-1) for c in ctx.candidates]
        lengths = [len(p) for p in parts]
        flat = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        arrays.append(("candidates", flat))
    specs, chunks = [], []
    for key, value in arrays:
        spec, chunk = _array_chunk(value, key)
        specs.append(spec)
        chunks.append(chunk)
    header = {
        "kind": "run",
        "name": name,
        "source": source,
        "texts": {
            "query_texts": list(ctx.query_texts),
            "doc_texts": list(ctx.doc_texts),
            "query_ids": list(ctx.query_ids),
            "doc_ids": list(ctx.doc_ids),
        },
        "views_collapsed": bool(ctx.views_collapsed),
        "candidates": lengths,
        "arrays": specs,
        "settings": settings,
    }
    return [frame_prefix(header, sum(c.nbytes for c in chunks)), *chunks]


class _Output:
    """The child's stdout and stderr: a count, the first and the last few kB."""

    def __init__(self) -> None:
        self.total = 0
        self.head = b""
        self.tail = b""

    def add(self, data: bytes) -> None:
        self.total += len(data)
        if len(self.head) < OUTPUT_HEAD_BYTES:
            self.head += data[: OUTPUT_HEAD_BYTES - len(self.head)]
        self.tail = (self.tail + data)[-OUTPUT_TAIL_BYTES:]

    def text(self) -> str:
        """The kept output, with a marker where bytes were left out."""
        if self.total <= len(self.tail):
            return self.tail.decode("utf-8", "replace")
        missing = self.total - len(self.tail)  # bytes before the tail
        if missing <= len(self.head):
            return (self.head[:missing] + self.tail).decode("utf-8", "replace")
        skipped = missing - len(self.head)
        return (
            self.head.decode("utf-8", "replace")
            + f"\n[... {skipped} bytes ...]\n"
            + self.tail.decode("utf-8", "replace")
        )


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


@dataclass
class _Verdict:
    """What happened in one session (filled in as messages and events arrive)."""

    result: Frame | None = None
    error: Frame | None = None
    violations: list[tuple[str, str]] = field(default_factory=list)
    protocol: str | None = None
    timed_out: bool = False
    overflow: bool = False
    closed: bool = False
    encode_failures: list[str] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        return (
            self.result is not None
            or self.error is not None
            or self.protocol is not None
            or self.timed_out
            or self.overflow
            or self.closed
        )


class _Session:
    """One call: start the child, serve its messages, kill it, judge the outcome."""

    def __init__(self, source: str, name: str, limits: SandboxLimits, ctx: Context) -> None:
        self.source = source
        self.name = name
        self.limits = limits
        self.ctx = ctx
        self.verdict = _Verdict()
        self.output = _Output()
        self.outbox = _Outbox()
        self.scopes: list[AbstractContextManager[None]] = []
        self.serving = 0.0  # seconds spent in the parent's encoder (not charged to the child)
        self.shape = (0, 0)
        self.returncode: int | None = None
        self.killed = False  # the parent killed a child that was still running
        self.max_rss = 0
        self.cpu_seconds = 0.0

    def run(self, Q: Matrix, D: Matrix, S: Matrix) -> Matrix:
        self.shape = (int(S.shape[0]), int(S.shape[1]))
        with tempfile.TemporaryDirectory(prefix="ettc-sandbox-") as workdir:
            settings = {
                "memory_bytes": int(self.limits.memory_bytes),
                "cpu_seconds": math.ceil(_cpu_seconds(self.limits)),
                "open_files": int(self.limits.open_files),
                "isolate_network": self.limits.isolate_network,
                "drop_privileges": self.limits.drop_privileges,
                "workdir": workdir,
            }
            request = _request(self.source, self.name, Q, D, S, self.ctx, settings)
            self._spawn_and_serve(workdir, request)
        return self._judge()

    def _spawn_and_serve(self, workdir: str, request: list[bytes | memoryview]) -> None:
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        label = "".join(c for c in self.name if c.isprintable())[:80] or "program"
        argv = [sys.executable, "-B", "-s", "-P", "-X", "faulthandler", "-m", CHILD_MODULE]
        try:
            proc = subprocess.Popen(
                [*argv, str(to_child_r), str(from_child_w), label],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=workdir,
                env=_child_env(self.limits, workdir),
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
            return 16 * self.shape[0] * self.shape[1]
        if kind == "encode":
            return self.limits.message_bytes
        if kind in ("error", "violation"):
            return 1 << 16
        return 0

    def _serve(
        self, proc: subprocess.Popen[bytes], to_child: int, from_child: int, out: int
    ) -> None:
        for fd in (to_child, from_child, out):
            os.set_blocking(fd, False)
        reader = FrameReader(max_header=MAX_HEADER_BYTES, payload_limit=self._payload_limit)
        start = time.monotonic()
        with selectors.DefaultSelector() as sel:
            sel.register(from_child, selectors.EVENT_READ, "protocol")
            sel.register(out, selectors.EVENT_READ, "output")
            writing = False
            while not self.verdict.finished:
                if self.outbox.chunks and not writing:
                    sel.register(to_child, selectors.EVENT_WRITE, "input")
                    writing = True
                remaining = self.limits.wall_seconds - (time.monotonic() - start - self.serving)
                if remaining <= 0:
                    self.verdict.timed_out = True
                    break
                for key, _ in sel.select(timeout=remaining):
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
        self.output.add(data)
        if self.output.total > self.limits.output_bytes:
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

    def _encode(self, frame: Frame) -> None:
        """Serve one encoder request with the parent's (metered) ``encode_fn``."""
        header = frame.header
        options = header.get("options")
        try:
            texts = json.loads(bytes(frame.payload).decode("ascii"))
        except (ValueError, RecursionError):
            raise ProtocolError("an encode request's texts are not ASCII JSON") from None
        if (
            not isinstance(texts, list)
            or not all(isinstance(t, str) for t in texts)
            or header.get("count") != len(texts)
            or not isinstance(options, dict)
            or not set(options) <= {"view", "dim", "max_length"}
        ):
            raise ProtocolError("an encode request is malformed")
        t0 = time.monotonic()
        try:
            emb = np.ascontiguousarray(self.ctx.encode_fn(texts, **options))
        except Exception as exc:
            message = str(exc)[:2000]
            self.verdict.encode_failures.append(f"{type(exc).__name__}: {message}")
            reply = {"kind": "encode_error", "type": type(exc).__name__, "message": message}
            self.outbox.put([frame_prefix(reply)])
            return
        finally:
            self.serving += time.monotonic() - t0
        spec, chunk = _array_chunk(emb, "embeddings")
        reply = {"kind": "embeddings", "shape": spec["shape"], "dtype": spec["dtype"]}
        self.outbox.put([frame_prefix(reply, chunk.nbytes), chunk])

    def _reap(self, proc: subprocess.Popen[bytes], grace: float) -> None:
        """Wait up to ``grace`` seconds for the child to exit, kill its group, reap it."""
        deadline = time.monotonic() + grace
        exited = _exited(proc.pid)
        while not exited and time.monotonic() < deadline:
            time.sleep(0.005)
            exited = _exited(proc.pid)
        self.killed = not exited
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except ChildProcessError:  # reaped by someone else (a SIGCHLD handler)
            proc.returncode = 0
            return
        proc.returncode = self.returncode = os.waitstatus_to_exitcode(status)
        self.max_rss = usage.ru_maxrss * 1024
        self.cpu_seconds = usage.ru_utime + usage.ru_stime

    def _drain(self, fd: int, seconds: float) -> None:
        """Read what the dead child left in its output pipe (bounded in time)."""
        deadline = time.monotonic() + seconds
        while True:
            try:
                data = os.read(fd, 1 << 16)
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return
                time.sleep(0.01)
                continue
            if not data:
                return
            self.output.add(data)
            if self.output.total > self.limits.output_bytes + (1 << 20):
                return

    def _fail(self, status: Status, reason: str, tail: str = "") -> SandboxFailure:
        if tail.strip():
            reason = f"{reason}\n{tail.strip()}"
        if len(reason) > REASON_BYTES:
            reason = reason[: REASON_BYTES // 4] + "\n[...]\n" + reason[-(3 * REASON_BYTES) // 4 :]
        return SandboxFailure(status, reason)

    def _judge(self) -> Matrix:
        """The matrix, or the :class:`SandboxFailure` that says what went wrong."""
        v, limits = self.verdict, self.limits
        if v.violations:
            raise self._fail(Status.REJECTED, _violation_reason(v.violations))
        if v.overflow:
            raise self._fail(
                Status.CRASHED,
                f"the program printed more than {limits.output_bytes} bytes to stdout/stderr "
                "and was killed; its output ended with:",
                self.output.tail.decode("utf-8", "replace")[-1000:],
            )
        if v.protocol is not None:
            raise self._fail(Status.CRASHED, f"protocol: {v.protocol}; the child was killed")
        if v.timed_out:
            raise self._fail(
                Status.TIMEOUT,
                f"the program ran longer than {limits.wall_seconds:g} s (wall time, not "
                "counting encoder calls) and was killed",
            )
        if v.result is not None:
            return self._decode_result(v.result)
        if v.error is not None:
            raise self._error(v.error)
        raise self._death()

    def _error(self, frame: Frame) -> SandboxFailure:
        text = bytes(frame.payload).decode("utf-8", "replace")
        kind = str(frame.header.get("type"))[:100]
        if frame.header.get("memory") is True:
            return self._fail(
                Status.MEMORY,
                f"the program ran out of memory (limit {_gib(self.limits.memory_bytes)}): {text}",
            )
        if kind == "ModuleNotFoundError" and text.startswith(REFUSED_IMPORT):
            module = text.removeprefix(REFUSED_IMPORT).split("'", 1)[0]
            return self._fail(
                Status.REJECTED,
                f"no-external-model: the program tried to import '{module}', which is not "
                f"available to programs (allowed: {', '.join(ALLOWED_MODULES)})",
            )
        failures = self.verdict.encode_failures
        note = f" (the encoder raised {failures[-1]})" if failures else ""
        return self._fail(Status.CRASHED, f"the program raised {kind}{note}: {text}")

    def _death(self) -> SandboxFailure:
        """The child ended (or closed its channel) without a result."""
        code, tail = self.returncode, self.output.text()
        mem = f"{_gib(self.limits.memory_bytes)}"
        if self.killed:
            return self._fail(
                Status.CRASHED,
                "the program closed its result channel without a result and was killed",
                tail,
            )
        if code is not None and code < 0:
            sig = _signal_name(-code)
            if -code == signal.SIGXCPU or self.cpu_seconds >= _cpu_seconds(self.limits):
                return self._fail(
                    Status.TIMEOUT,
                    f"the program exceeded its CPU-time limit of {_cpu_seconds(self.limits):g} s "
                    f"(killed by {sig})",
                    tail,
                )
            # Only an outside SIGKILL (the kernel's out-of-memory killer) means memory. The
            # child's ru_maxrss cannot tell: Linux carries the parent's resident size at fork
            # across exec, so a large parent makes every child look large.
            if -code == signal.SIGKILL:
                return self._fail(
                    Status.MEMORY,
                    f"the child was killed by {sig} without a result, most likely for memory "
                    f"(limit {mem})",
                    tail,
                )
            return self._fail(Status.CRASHED, f"the child was killed by signal {sig}", tail)
        if code == EXIT_MEMORY:
            return self._fail(Status.MEMORY, f"the program ran out of memory (limit {mem})", tail)
        if code == EXIT_INTERNAL:
            return self._fail(Status.CRASHED, "the sandbox's child failed to start", tail)
        return self._fail(
            Status.CRASHED, f"the child exited with code {code} before returning a result", tail
        )

    def _decode_result(self, frame: Frame) -> Matrix:
        """The child's matrix, validated exactly as :func:`check_output` does in-process."""
        header, name = frame.header, self.name
        try:
            if "type" in header:
                kind = str(header["type"])[:100]
                raise ProgramOutputError(f"program {name} returned {kind}, not an array")
            shape = header.get("shape")
            if not isinstance(shape, list) or not all(isinstance(n, int) and n >= 0 for n in shape):
                raise ProtocolError("a result's shape is not a list of sizes")
            if tuple(shape) != self.shape:
                raise ProgramOutputError(
                    f"program {name} returned shape {tuple(shape)}, expected {self.shape}"
                )
            dtype = str(header.get("dtype"))[:100]
            if header.get("raw") is not True or not _DTYPE.fullmatch(dtype):
                raise ProgramOutputError(f"program {name} returned dtype {dtype}")
            arr = np.dtype(dtype)
            if len(frame.payload) != math.prod(shape) * arr.itemsize:
                raise ProtocolError(
                    f"a result of shape {tuple(shape)} and dtype {dtype} came with "
                    f"{len(frame.payload)} bytes"
                )
            out = np.frombuffer(frame.payload, dtype=arr).reshape(self.shape)
            return check_output(out, self.shape, name)
        except ProgramOutputError as exc:
            raise self._fail(Status.INVALID_OUTPUT, str(exc)) from None
        except ProtocolError as exc:
            raise self._fail(Status.CRASHED, f"protocol: {exc}") from None


_OPERATIONS: tuple[tuple[str, str], ...] = (
    ("socket.", "open a socket"),
    ("subprocess.", "start a process"),
    ("os.system", "run a shell command"),
    ("os.fork", "start a process"),
    ("os.posix_spawn", "start a process"),
    ("os.exec", "start a process"),
    ("os.spawn", "start a process"),
    ("os.kill", "send a signal"),
    ("signal.", "send a signal"),
    ("os.putenv", "change an environment variable"),
    ("os.unsetenv", "change an environment variable"),
    ("os.", "change the file system or the process"),
    ("ctypes.", "call native code through ctypes"),
    ("resource.", "change its resource limits"),
    ("gc.", "reach the interpreter's objects"),
    ("code.", "build code objects"),
    ("marshal.", "build code objects"),
    ("sys.", "change the interpreter"),
    ("mmap.", "map memory"),
)


def _violation_reason(violations: list[tuple[str, str]]) -> str:
    """``no-external-model: the program tried to open a socket (socket.connect)``."""
    parts = []
    for event, detail in violations[:3]:
        if event == "open" and detail.startswith("for writing: "):
            path = detail.removeprefix("for writing: ")
            parts.append(f"write the file {path!r}, and programs write no file (open)")
        elif event in ("open", "os.listdir", "os.scandir"):
            parts.append(f"read {detail!r}, outside its empty working directory ({event})")
        else:
            what = next((w for p, w in _OPERATIONS if event.startswith(p)), f"use {event}")
            parts.append(f"{what} ({event}{': ' + detail if detail else ''})")
    more = f"; {len(violations) - 3} more" if len(violations) > 3 else ""
    return "no-external-model: the program tried to " + "; then to ".join(parts) + more


def _exited(pid: int) -> bool:
    """Whether a child has exited, without reaping it.

    ``WNOWAIT`` keeps an exited child a zombie: its pid, hence its process group id, stays
    ours until it is reaped, so a ``killpg`` before that cannot hit a recycled group.
    """
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # already reaped elsewhere
        return True


def _gib(n: float) -> str:
    return f"{n / 2**30:.2f} GiB"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
