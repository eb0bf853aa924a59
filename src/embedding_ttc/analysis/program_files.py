"""Program files as programs of the transfer matrix: read and checked once, run in the sandbox.

``transfer --program-file F`` (and the programs a search run discovered,
:mod:`embedding_ttc.analysis.discovered`) puts programs that are not in the library into the
matrix under their file's stem. :func:`load_file_programs` reads every file, refuses a name
taken by a library program or another file (case-insensitive, before anything is written:
:func:`~embedding_ttc.program_files.sandbox.program.load_program_files`) and runs the static
checks of program files. Each file becomes a :class:`FileProgram`: plain values (name, path,
source, limits), so an executor ships it to its workers, where :meth:`FileProgram.build` makes
the
:class:`~embedding_ttc.program_files.sandbox.program.SandboxedProgram` that every call runs in a
contained child process.

A file the static checks refused is kept, with its reason: building it raises that rejection,
so each of its cells is a failure with status ``rejected``, as every other failure of a
program file (``timeout``, ``crashed``, ``budget``, ``invalid_output``) is, and the study goes
on. A file program's cells record the sha256 of its source (:func:`source_sha256`), which
decides whether a stored cell is still its own (:mod:`embedding_ttc.analysis.staleness`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from embedding_ttc.program_files.checks.rules import ProgramRejected
from embedding_ttc.program_files.sandbox.limits import DEFAULT_LIMITS, SandboxLimits
from embedding_ttc.program_files.sandbox.program import (
    SandboxedProgram,
    load_program_files,
    read_program_source,
    source_sha256,
)


@dataclass(frozen=True)
class FileProgram:
    """A program file of the study, as read and checked in the driver.

    Attributes:
        name: the program's name in the matrix (the file's stem).
        path: the file, as given.
        source: its text as read.
        limits: the sandbox's limits of every call.
        rejected: the static checks' reason when they refused the file (``None``: passed).

    """

    name: str
    path: Path
    source: str
    limits: SandboxLimits = DEFAULT_LIMITS
    rejected: str | None = None

    @property
    def sha256(self) -> str:
        """The sha256 of the source: what identifies this program in its cells."""
        return source_sha256(self.source)

    def build(self) -> SandboxedProgram:
        """The sandboxed program of every call.

        Raises:
            ProgramRejected: the static checks refused the file (status ``rejected``).

        """
        if self.rejected is not None:
            raise ProgramRejected(self.rejected)
        return SandboxedProgram(self.source, self.name, self.limits)


def load_file_programs(
    paths: Sequence[Path],
    *,
    limits: SandboxLimits,
    task_names: Iterable[str],
    taken: Iterable[str],
) -> tuple[FileProgram, ...]:
    """Read and check program files, in order; a refused file keeps its reason.

    Args:
        paths: the program files.
        limits: the sandbox's limits of every call of every program.
        task_names: the tasks a program may meet; a string literal naming one is refused.
        taken: the names of the study's other programs (a file may not take one).

    Raises:
        EmbeddingTTCError: a file cannot be read, or its name is taken by a program or by
            another file (compared without case).

    """
    accepted, refused = load_program_files(paths, limits=limits, task_names=task_names, taken=taken)
    sources = {p.name: p.source for p in accepted}
    reasons = dict(refused)
    out = []
    for path in (Path(p) for p in paths):
        name = path.stem
        if name in sources:
            out.append(FileProgram(name, path, sources[name], limits))
        else:  # read again: the check kept only the reason of a file it refused
            out.append(FileProgram(name, path, read_program_source(path), limits, reasons[name]))
    return tuple(out)
