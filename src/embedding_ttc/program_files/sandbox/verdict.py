"""What a finished sandboxed call means: the program's matrix, or a failure that says why.

A :class:`Verdict` is filled in while the parent serves the child (messages, events, the exit
status); :meth:`Verdict.judge` then returns the matrix, validated exactly as an in-process
program's output is, or raises :class:`SandboxFailure` with the ledger status and a reason.
"""

from __future__ import annotations

import math
import signal
from dataclasses import dataclass, field

import numpy as np

from embedding_ttc.program_files.contract import ALLOWED_MODULES
from embedding_ttc.program_files.sandbox.limits import SandboxLimits, cpu_limit
from embedding_ttc.program_files.sandbox.wire import (
    ARRAY_DTYPE,
    EXIT_INTERNAL,
    EXIT_MEMORY,
    REFUSED_IMPORT,
    Frame,
    ProtocolError,
)
from embedding_ttc.programs.base import Matrix
from embedding_ttc.programs.outcome import CandidateError, Status
from embedding_ttc.programs.output import ProgramOutputError, check_output

REASON_BYTES = 4000
"""The longest failure reason (message, traceback tail, output tail)."""

OUTPUT_HEAD_BYTES = 1024
OUTPUT_TAIL_BYTES = 3072
"""How much of the child's output is kept for a failure reason: the start and the end."""


class SandboxFailure(CandidateError):
    """A sandboxed program did not return a valid matrix.

    Its ``status`` is ``timeout``, ``memory``, ``crashed``, ``invalid_output`` or ``rejected``;
    for a crash its ``reason`` ends with the last lines of the child's traceback or output (at
    most :data:`REASON_BYTES` characters in all).
    """


class ChildOutput:
    """The child's stdout and stderr: a count, the first and the last few kB."""

    def __init__(self) -> None:
        self.total = 0
        self.head = b""
        self.tail = b""

    def add(self, data: bytes) -> None:
        """Count ``data`` and keep what falls in the head or the tail."""
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


@dataclass
class Spent:
    """Where a run's time went: the program's own compute and the encodes served for it.

    A run is one call, or the calls of a program on a task in shortlist batches, which share
    one (see :func:`~embedding_ttc.evaluation.run_scope.program_run`).

    Attributes:
        start: the parent's clock (``time.monotonic``) when the run began (0: not yet).
        elapsed: seconds from ``start`` to the moment the run was found over its limit.
        serving: seconds the parent spent in its encoder for the child.
        encoded: texts the parent encoded for the child.
        calls: encoder requests served (or begun).

    """

    start: float = 0.0
    elapsed: float = 0.0
    serving: float = 0.0
    encoded: int = 0
    calls: int = 0

    def timeout_reason(self, limits: SandboxLimits) -> str:
        """Why a call timed out, with its time split between the program and the encoder.

        ``timed out after 5.0 s: 0.4 s in the program, 4.6 s serving 12,000 encodes in
        3,000 calls (limit 5 s, ...)``.
        """
        if limits.timeout_covers == "program":
            return (
                f"the program ran longer than {limits.wall_seconds:g} s (wall time, not "
                f"counting encoder calls: {self.serving:.1f} s serving {self.encoded:,} "
                f"encodes in {self.calls:,} requests) and was killed"
            )
        own = max(self.elapsed - self.serving, 0.0)
        calls = f"{self.calls:,} call{'' if self.calls == 1 else 's'}"
        return (
            f"timed out after {self.elapsed:.1f} s: {own:.1f} s in the program, "
            f"{self.serving:.1f} s serving {self.encoded:,} encodes in {calls} "
            f"(limit {limits.wall_seconds:g} s for the program and the encodes served for it; "
            "the program was killed)"
        )


@dataclass
class Verdict:
    """What happened in one call (filled in as messages and events arrive, then at exit).

    Attributes:
        name: the program's name (in failure reasons).
        limits: the call's limits (in failure reasons).
        shape: the |Q|×|D| shape the result must have.
        output: what the child printed.
        returncode: the child's exit status (negative: killed by that signal).
        killed: the parent killed a child that was still running.
        max_rss: the child's peak resident memory in bytes.
        cpu_seconds: the child's CPU time.
        spent: where the call's time went (for a timeout's reason).

    """

    name: str
    limits: SandboxLimits
    shape: tuple[int, int] = (0, 0)
    result: Frame | None = None
    error: Frame | None = None
    violations: list[tuple[str, str]] = field(default_factory=list)
    protocol: str | None = None
    timed_out: bool = False
    overflow: bool = False
    over_budget: str | None = None
    closed: bool = False
    encode_failures: list[str] = field(default_factory=list)
    output: ChildOutput = field(default_factory=ChildOutput)
    returncode: int | None = None
    killed: bool = False
    max_rss: int = 0
    cpu_seconds: float = 0.0
    spent: Spent = field(default_factory=Spent)

    @property
    def finished(self) -> bool:
        """Whether the parent can stop serving: a result, an error, or a reason to kill."""
        return (
            self.result is not None
            or self.error is not None
            or self.protocol is not None
            or self.timed_out
            or self.overflow
            or self.over_budget is not None
            or self.closed
        )

    def _fail(self, status: Status, reason: str, tail: str = "") -> SandboxFailure:
        if tail.strip():
            reason = f"{reason}\n{tail.strip()}"
        if len(reason) > REASON_BYTES:
            reason = reason[: REASON_BYTES // 4] + "\n[...]\n" + reason[-(3 * REASON_BYTES) // 4 :]
        return SandboxFailure(status, reason)

    def judge(self) -> Matrix:
        """The matrix, or the :class:`SandboxFailure` that says what went wrong."""
        limits = self.limits
        if self.violations:
            raise self._fail(Status.REJECTED, _violation_reason(self.violations))
        if self.overflow:
            raise self._fail(
                Status.CRASHED,
                f"the program printed more than {limits.output_bytes} bytes to stdout/stderr "
                "and was killed; its output ended with:",
                self.output.tail.decode("utf-8", "replace")[-1000:],
            )
        if self.protocol is not None:
            raise self._fail(Status.CRASHED, f"protocol: {self.protocol}; the child was killed")
        if self.over_budget is not None:
            raise self._fail(Status.BUDGET, f"{self.over_budget}; the program was killed")
        if self.timed_out:
            raise self._fail(Status.TIMEOUT, self.spent.timeout_reason(limits))
        if self.result is not None:
            return self._decode_result(self.result)
        if self.error is not None:
            raise self._error(self.error)
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
        failures = self.encode_failures
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
            if -code == signal.SIGXCPU or self.cpu_seconds >= cpu_limit(self.limits):
                return self._fail(
                    Status.TIMEOUT,
                    f"the program exceeded its CPU-time limit of {cpu_limit(self.limits):g} s "
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
                    f"(limit {mem}; else a kill from outside the sandbox)",
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
            if header.get("raw") is not True or not ARRAY_DTYPE.fullmatch(dtype):
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
            raise self._fail(Status.INVALID_OUTPUT, exc.reason) from None
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


def _gib(n: float) -> str:
    return f"{n / 2**30:.2f} GiB"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
