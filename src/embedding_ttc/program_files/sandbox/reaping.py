"""Ending a sandbox child: wait for it, kill its process group, reap it, keep what it printed.

A per-call child (:class:`~embedding_ttc.program_files.sandbox.session.Session`) and a warm one
(:mod:`~embedding_ttc.program_files.sandbox.warm`) end the same way; they differ only in what
they record of the reaped child (a warm child's CPU time is its whole life's, a call's is not).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from contextlib import suppress
from dataclasses import dataclass

from embedding_ttc.program_files.sandbox.verdict import ChildOutput

DRAIN_EXTRA_BYTES = 1 << 20
"""How much past the output limit a dead child's leftovers are still read (then dropped)."""


@dataclass(frozen=True)
class Reaped:
    """How a child ended.

    Attributes:
        killed: it had not exited within the grace period and was killed.
        returncode: its exit code (negative: the signal), ``None`` if someone else reaped it.
        max_rss: its peak resident memory in bytes (0 when unknown).
        cpu_seconds: its whole life's user and system CPU time (0 when unknown).

    """

    killed: bool
    returncode: int | None
    max_rss: int = 0
    cpu_seconds: float = 0.0


def exited_without_reaping(pid: int) -> bool:
    """Whether a child has exited, without reaping it.

    ``WNOWAIT`` keeps an exited child a zombie: its pid, hence its process group id, stays
    ours until it is reaped, so a ``killpg`` before that cannot hit a recycled group.
    """
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # already reaped elsewhere
        return True


def kill_and_reap(proc: subprocess.Popen[bytes], grace: float) -> Reaped:
    """Wait up to ``grace`` seconds for the child to exit, kill its group, reap it."""
    deadline = time.monotonic() + grace
    exited = exited_without_reaping(proc.pid)
    while not exited and time.monotonic() < deadline:
        time.sleep(0.005)
        exited = exited_without_reaping(proc.pid)
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    except ChildProcessError:  # reaped by someone else (a SIGCHLD handler)
        proc.returncode = 0
        return Reaped(killed=not exited, returncode=None)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Reaped(
        killed=not exited,
        returncode=proc.returncode,
        max_rss=usage.ru_maxrss * 1024,
        cpu_seconds=usage.ru_utime + usage.ru_stime,
    )


def drain(fd: int, output: ChildOutput, limit: int, seconds: float) -> None:
    """Keep what a dead child left in its output pipe (bounded in time and size)."""
    deadline = time.monotonic() + seconds
    while output.total <= limit + DRAIN_EXTRA_BYTES:
        try:
            data = os.read(fd, 1 << 16)
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return
            time.sleep(0.01)
            continue
        if not data:
            return
        output.add(data)
