"""Run a program file in a separate, contained process: the sandbox.

Code written by a language model runs here. Static checks
(:mod:`~embedding_ttc.program_files.checks`) reject most bad programs early, but they are not a
sandbox; the layers that contain a program are these, all applied on every call of a
:class:`SandboxedProgram`:

* **A fresh process** per call (``python -B -s -P -m embedding_ttc.program_files.sandbox.child``)
  in its own session, so the parent can kill its whole process group; started with an environment
  built from nothing (no variable of the parent leaks; ``PYTHONHASHSEED=0`` makes string
  hashing, hence set order, the same on every run), in a fresh temporary working directory
  that is removed afterwards. ``-I`` is not used because it would ignore ``PYTHONHASHSEED``;
  its other parts (``-s``, ``-P``) are, and the environment is ours anyway (``-P`` is new in
  Python 3.11: on 3.10 the child takes its working directory off ``sys.path`` itself).
* **A protocol on dedicated pipes** (``pass_fds``), not stdout: printing cannot corrupt it.
  The parent never unpickles what the child sends: JSON headers and raw array bytes whose
  lengths are checked against a limit before anything is buffered
  (:mod:`~embedding_ttc.program_files.sandbox.wire`).
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

import hashlib

from embedding_ttc.evaluation.run_scope import current_run
from embedding_ttc.program_files.sandbox.limits import DEFAULT_LIMITS, SandboxLimits
from embedding_ttc.program_files.sandbox.session import Session
from embedding_ttc.program_files.sandbox.verdict import Spent
from embedding_ttc.programs.base import Context, Matrix


def source_sha256(source: str) -> str:
    """The sha256 (hex) of a program's source, as UTF-8: what identifies a program file."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


class SandboxedProgram:
    """A program file's source, run in a fresh contained process on every call.

    Construction runs no static check (a
    :class:`~embedding_ttc.program_files.program_file.ProgramFile` has run them), so tests can
    hand hostile code straight to the containment. ``source_sha256`` identifies the source
    (:func:`~embedding_ttc.programs.base.program_source_sha256`), as a library program's
    ``version`` identifies its code.

    Args:
        source: the program file's text (defines ``program(Q, D, S, ctx)``).
        name: the program's name (in records, error messages and the child's command line).
        limits: the limits of every call.

    """

    def __init__(self, source: str, name: str, limits: SandboxLimits = DEFAULT_LIMITS) -> None:
        self.source = source
        self.name = name
        self.limits = limits
        self.source_sha256 = source_sha256(source)

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """Run the program in a child process; raise :class:`SandboxFailure` if it fails.

        Within an evaluator's run of this program on a task (shortlist batches:
        :func:`~embedding_ttc.evaluation.run_scope.program_run`), every call shares one clock,
        so the wall-time limit holds for the run; outside one, each call has its own.
        """
        return Session(self.source, self.name, self.limits, ctx, self._run_clock()).run(Q, D, S)

    def _run_clock(self) -> Spent:
        """The clock of the current run (a fresh one outside a run or under the older rule)."""
        slots = current_run()
        if slots is None or self.limits.timeout_covers != "run":
            return Spent()
        clock = slots.setdefault(id(self), Spent())
        return clock if isinstance(clock, Spent) else Spent()

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
