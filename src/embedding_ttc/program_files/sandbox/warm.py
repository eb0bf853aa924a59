"""A warm sandboxed worker: a program file loaded once into a long-lived contained child.

A per-call sandbox (:class:`~embedding_ttc.program_files.sandbox.program.SandboxedProgram`)
starts a fresh interpreter, imports numpy and contains itself for every call: about 90 ms
before the program's first line, which is nothing next to an evaluation but everything to a
service answering ``/rerank`` in a millisecond. :class:`WarmProgram` starts the child once
(:mod:`~embedding_ttc.program_files.sandbox.warm_child`), with every containment of the
per-call child, applied once and kept: network namespace, rlimits, dropped privileges, the
audit hook, a clean environment and an empty working directory. Each call is then one ``run``
message on the same pipes, served by the parent exactly as a per-call
:class:`~embedding_ttc.program_files.sandbox.session.Session` serves it: the wall time, the
encoder budget, the output and message limits are per call, and the outcome is judged by
the same :class:`~embedding_ttc.program_files.sandbox.verdict.Verdict`.

**Any failed call replaces the child.** A crash, a timeout, an over-budget encoder request, a
refused operation, too much output or an invalid result fails that call with its status and
reason (:class:`~embedding_ttc.program_files.sandbox.verdict.SandboxFailure`); the child's
process group is killed and reaped, and the next call starts a new child. ``RLIMIT_CPU``
counts a process's whole life, so the warm child is given :data:`CPU_HEADROOM` times a call's
CPU limit and is replaced, between calls, once it has used more than that headroom minus one
call's worth: every call can still use its full limit.

A warm child belongs to the process that started it (a forked copy starts its own): several
serving workers each get their own. Calls are serialised by a lock; the child is stopped
when the program is closed or garbage-collected, or when the parent exits (it then reads the
end of its channel and exits).
"""

from __future__ import annotations

import math
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from contextlib import suppress
from pathlib import Path
from typing import Any

from embedding_ttc.program_files.sandbox.limits import (
    DEFAULT_LIMITS,
    SandboxLimits,
    child_env,
    cpu_limit,
)
from embedding_ttc.program_files.sandbox.program import SandboxedProgram
from embedding_ttc.program_files.sandbox.reaping import drain, kill_and_reap
from embedding_ttc.program_files.sandbox.session import SAFE_PATH, Session, run_message
from embedding_ttc.program_files.sandbox.verdict import Verdict
from embedding_ttc.program_files.sandbox.wire import (
    MAX_HEADER_BYTES,
    FrameReader,
    ProtocolError,
    frame_prefix,
    write_all,
)
from embedding_ttc.programs.base import Context, Matrix, Program

WARM_CHILD_MODULE = "embedding_ttc.program_files.sandbox.warm_child"
"""The warm child's module, run as ``python -m`` once per worker."""

CPU_HEADROOM = 4
"""The warm child's ``RLIMIT_CPU``, in calls' CPU limits (:func:`cpu_limit`)."""


class WarmProgram(SandboxedProgram):
    """A program file's source, run in one long-lived contained child, a message per call.

    It is a :class:`SandboxedProgram` (same source, name, limits and ``source_sha256``) whose
    calls reuse a warm child; see the module's docstring for what that keeps and what it
    replaces.
    """

    def __init__(self, source: str, name: str, limits: SandboxLimits = DEFAULT_LIMITS) -> None:
        super().__init__(source, name, limits)
        self._lock = threading.Lock()
        self._worker: _Worker | None = None
        self.started = 0  # children started so far (a replaced child counts again)

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """Run the program in the warm child; raise :class:`SandboxFailure` if it fails."""
        with self._lock:
            worker = self._ready_worker()
            try:
                return worker.call(Q, D, S, ctx)
            finally:
                if not worker.alive:
                    self._worker = None
                elif worker.spent():
                    worker.stop()
                    self._worker = None

    def start(self) -> None:
        """Start the warm child now rather than at the first call (a failure raises)."""
        with self._lock:
            self._ready_worker()

    def close(self) -> None:
        """Stop the warm child, if any (the next call starts a new one)."""
        with self._lock:
            if self._worker is not None:
                self._worker.stop()
                self._worker = None

    @property
    def pid(self) -> int | None:
        """The warm child's process id, or ``None`` when none is running."""
        worker = self._worker
        return worker.proc.pid if worker is not None and worker.alive else None

    def _ready_worker(self) -> _Worker:
        worker = self._worker
        if worker is not None and worker.owner != os.getpid():
            worker = None  # a forked copy of a parent's child is not ours to use or kill
        if worker is None or not worker.alive:
            worker = _Worker(self)
            self._worker = worker
            self.started += 1
            worker.start()
        return worker

    def __repr__(self) -> str:
        return f"WarmProgram(name={self.name!r}, limits={self.limits!r})"


def warm(program: Program) -> Program:
    """``program`` with its sandbox made warm, if it is a per-call sandboxed program."""
    if isinstance(program, SandboxedProgram) and not isinstance(program, WarmProgram):
        return WarmProgram(program.source, program.name, program.limits)
    return program


class _Worker:
    """One warm child: its process, pipes and working directory."""

    def __init__(self, program: WarmProgram) -> None:
        self.program = program
        self.owner = os.getpid()
        self.alive = False
        self.workdir = tempfile.mkdtemp(prefix="ettc-warm-")
        self.settings: dict[str, Any] = {
            "memory_bytes": int(program.limits.memory_bytes),
            "cpu_seconds": math.ceil(CPU_HEADROOM * cpu_limit(program.limits)),
            "open_files": int(program.limits.open_files),
            "isolate_network": program.limits.isolate_network,
            "drop_privileges": program.limits.drop_privileges,
            "workdir": self.workdir,
        }
        self.cpu_at_ready = 0.0
        self.cpu_at_call = 0.0
        self._finalizer: weakref.finalize[Any, Any] | None = None

    def start(self) -> None:
        """Start the child, load the program and wait for ``ready``; a failure raises."""
        program = self.program
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        label = "".join(c for c in program.name if c.isprintable())[:80] or "program"
        argv = [
            sys.executable,
            "-B",
            "-s",
            *SAFE_PATH,
            "-X",
            "faulthandler",
            "-m",
            WARM_CHILD_MODULE,
        ]
        try:
            self.proc = subprocess.Popen(
                [*argv, str(to_child_r), str(from_child_w), label],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=self.workdir,
                env=child_env(program.limits, self.workdir),
                pass_fds=(to_child_r, from_child_w),
                start_new_session=True,
            )
        except BaseException:
            for fd in (to_child_r, to_child_w, from_child_r, from_child_w):
                os.close(fd)
            _remove(self.workdir)
            raise
        os.close(to_child_r)
        os.close(from_child_w)
        assert self.proc.stdout is not None  # stdout=PIPE
        self.to_child, self.from_child = to_child_w, from_child_r
        self.out = self.proc.stdout.fileno()
        self.alive = True
        self._finalizer = weakref.finalize(
            self, _stop, self.proc, (self.to_child, self.from_child), self.workdir, self.owner
        )
        header = {"kind": "load", "name": program.name, "source": program.source}
        write_all(self.to_child, [frame_prefix({**header, "settings": self.settings})])
        verdict = Verdict(program.name, program.limits)
        if not self._await_ready(verdict):
            self._kill(verdict, 2.0 if verdict.closed else 0.0)
            verdict.judge()  # raises: the child's error or its death
        self.cpu_at_ready = _cpu_seconds(self.proc.pid)

    def _await_ready(self, verdict: Verdict) -> bool:
        """Read the child's answer to ``load``: ``ready`` (True), or a failure in ``verdict``."""
        reader = FrameReader(max_header=MAX_HEADER_BYTES, payload_limit=lambda h: 1 << 16)
        deadline = time.monotonic() + self.program.limits.wall_seconds
        for fd in (self.from_child, self.out):
            os.set_blocking(fd, False)
        with selectors.DefaultSelector() as sel:
            sel.register(self.from_child, selectors.EVENT_READ, "protocol")
            sel.register(self.out, selectors.EVENT_READ, "output")
            while (remaining := deadline - time.monotonic()) > 0:
                for key, _ in sel.select(timeout=min(remaining, 1.0)):
                    data = _read(key.fd)
                    if key.data == "output":
                        if data == b"":
                            sel.unregister(key.fd)
                        elif data:
                            verdict.output.add(data)
                        continue
                    if data == b"":
                        verdict.closed = True
                        return False
                    try:
                        for frame in reader.feed(data or b""):
                            if frame.header["kind"] == "ready":
                                return True
                            if frame.header["kind"] == "error":
                                verdict.error = frame
                                return False
                            verdict.violations.append(("load", str(frame.header["kind"])[:40]))
                            return False
                    except ProtocolError as exc:
                        verdict.protocol = str(exc)
                        return False
        verdict.timed_out = True
        return False

    def call(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """One program call as a message to the warm child; its matrix, or a failure."""
        program = self.program
        session = Session(program.source, program.name, program.limits, ctx)
        verdict = session.verdict
        verdict.shape = (int(S.shape[0]), int(S.shape[1]))
        session.outbox.put(run_message(program.source, program.name, Q, D, S, ctx, self.settings))
        self.cpu_at_call = _cpu_seconds(self.proc.pid)
        try:
            # The per-call session's own serving loop: the same limits, messages and verdict.
            session.serve(self.proc, self.to_child, self.from_child, self.out)
        except BaseException:
            self._kill(verdict, 0.0)
            raise
        finally:
            for scope in reversed(session.scopes):
                scope.__exit__(None, None, None)
            session.scopes.clear()
        if not _clean(verdict):
            self._kill(verdict, 2.0 if verdict.closed else 0.0)
        try:
            return verdict.judge()
        except BaseException:
            self._kill(verdict, 0.0)
            raise

    def spent(self) -> bool:
        """Whether the child has too little CPU time left for a whole call."""
        used = _cpu_seconds(self.proc.pid) - self.cpu_at_ready
        return used > (CPU_HEADROOM - 1) * cpu_limit(self.program.limits)

    def _kill(self, verdict: Verdict, grace: float) -> None:
        """Wait up to ``grace`` s for the child to exit, kill its group, reap it, record it.

        As :class:`Session` reaps a per-call child, except that the CPU time recorded is
        this call's, not the warm child's whole life's (a verdict reads a CPU time at the
        limit as a timeout).
        """
        if not self.alive:
            return
        self.alive = False
        reaped = kill_and_reap(self.proc, grace)
        verdict.killed = reaped.killed
        if reaped.returncode is not None:
            verdict.returncode = reaped.returncode
            verdict.cpu_seconds = reaped.cpu_seconds - self.cpu_at_call
        drain(self.out, verdict.output, self.program.limits.output_bytes, 0.5 if grace else 0.0)
        self.stop()

    def stop(self) -> None:
        """Stop the child (if running), close its pipes and remove its working directory."""
        self.alive = False
        if self._finalizer is not None:
            self._finalizer()


def _clean(verdict: Verdict) -> bool:
    """Whether the child is fit for another call: a result and nothing else to hold against it."""
    return verdict.result is not None and not (
        verdict.violations
        or verdict.protocol is not None
        or verdict.timed_out
        or verdict.overflow
        or verdict.over_budget is not None
        or verdict.closed
    )


def _read(fd: int) -> bytes | None:
    try:
        return os.read(fd, 1 << 16)
    except BlockingIOError:
        return None


def _cpu_seconds(pid: int) -> float:
    """A running process's CPU time (user and system) from ``/proc``; 0 where unavailable."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        fields = stat.rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def _stop(proc: subprocess.Popen[bytes], fds: tuple[int, ...], workdir: str, owner: int) -> None:
    """Close the child's pipes, kill its group, reap it and remove its working directory."""
    for fd in fds:
        with suppress(OSError):
            os.close(fd)
    if proc.stdout is not None:
        with suppress(OSError):
            proc.stdout.close()
    if os.getpid() == owner and proc.returncode is None:  # a reaped pid may be reused
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with suppress(ChildProcessError, OSError):
            proc.wait(timeout=5)
    _remove(workdir)


def _remove(workdir: str) -> None:
    import shutil

    shutil.rmtree(workdir, ignore_errors=True)
