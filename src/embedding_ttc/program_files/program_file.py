"""A program file read and checked once: the one record (:class:`ProgramFile`) and its loader.

A program file defines ``def program(Q, D, S, ctx)``: a search's ``RUN/programs/gNNNN.py``, or
any file a user hands to ``evaluate --program-file``, ``transfer --program-file`` or ``index
build --program-file``. Every command reads it here: :func:`read_program_file` reads the text
(UTF-8), names the program after the file's stem and runs the static checks
(:mod:`~embedding_ttc.program_files.checks`); :func:`read_program_files` reads several and
refuses, before anything runs, a name that another program of the command or another file
already has. A file the checks refuse is kept with its reason (:attr:`ProgramFile.rejected`), so
that one bad file among several does not stop the others: each command decides what a refusal
means (a reported failure of ``evaluate``, cells with status ``rejected`` in the transfer
matrix, an error of ``index build``).

The record is plain values (name, path, source, the checks' verdict), so an executor ships it
to its workers; :meth:`ProgramFile.sandboxed` makes the
:class:`~embedding_ttc.program_files.sandbox.program.SandboxedProgram` that runs every call in
a contained child process.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.program_files.checks.rules import ProgramRejected
from embedding_ttc.program_files.checks.source import ParsedProgram, check_source
from embedding_ttc.program_files.sandbox.limits import DEFAULT_LIMITS, SandboxLimits
from embedding_ttc.program_files.sandbox.program import SandboxedProgram, source_sha256


@dataclass(frozen=True)
class ProgramFile:
    """A program file as read and checked.

    Attributes:
        name: the program's name (the file's stem).
        path: the file, as given.
        source: its text as read.
        rejected: the static checks' reason when they refused the file (``None``: passed).
        parsed: its syntax tree when the checks passed (what a deployment reads the lexical
            channels from); ``None`` for a refused file.

    """

    name: str
    path: Path
    source: str
    rejected: str | None = None
    parsed: ParsedProgram | None = field(default=None, compare=False, repr=False)

    @property
    def sha256(self) -> str:
        """The sha256 of the source: what identifies this program in records and indexes."""
        return source_sha256(self.source)

    @property
    def rejection(self) -> ProgramRejected | None:
        """The static checks' refusal as the error it is (``None``: the file passed)."""
        return None if self.rejected is None else ProgramRejected(self.rejected)

    def checked(self) -> ParsedProgram:
        """The syntax tree of a file the static checks passed.

        Raises:
            ProgramRejected: the static checks refused the file (status ``rejected``).
            ValueError: the record was made without its checks (not by :func:`read_program_file`).

        """
        if self.rejection is not None:
            raise self.rejection
        if self.parsed is None:
            raise ValueError(
                f"program file {self.path} holds no checked syntax tree; read it with "
                "read_program_file"
            )
        return self.parsed

    def sandboxed(self, limits: SandboxLimits = DEFAULT_LIMITS) -> SandboxedProgram:
        """The program, run in the sandbox on every call.

        Raises:
            ProgramRejected: the static checks refused the file (status ``rejected``).

        """
        if self.rejection is not None:
            raise self.rejection
        return SandboxedProgram(self.source, self.name, limits)


def read_program_source(path: Path | str) -> str:
    """A program file's text.

    Raises:
        EmbeddingTTCError: the file does not exist, cannot be read, or is not UTF-8 text (the
            message names the file).

    """
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise EmbeddingTTCError(f"program file {path} does not exist") from None
    except UnicodeDecodeError as exc:
        raise EmbeddingTTCError(f"program file {path} is not UTF-8 text ({exc})") from None
    except OSError as exc:
        raise EmbeddingTTCError(f"cannot read program file {path}: {exc.strerror}") from None


def read_program_file(path: Path | str, *, task_names: Iterable[str] = ()) -> ProgramFile:
    """Read a program file and run the static checks on it.

    Args:
        path: the file (``def program(Q, D, S, ctx)``).
        task_names: task names a string literal of the program must not equal (the
            ``task-universal`` check).

    Returns:
        The file, with the checks' reason in :attr:`ProgramFile.rejected` if they refused it.

    Raises:
        EmbeddingTTCError: the file cannot be read.

    """
    path = Path(path)
    source = read_program_source(path)
    try:
        parsed = check_source(source, task_names=task_names)
    except ProgramRejected as exc:
        return ProgramFile(path.stem, path, source, rejected=exc.reason)
    return ProgramFile(path.stem, path, source, parsed=parsed)


def read_program_files(
    paths: Iterable[Path | str], *, task_names: Iterable[str] = (), taken: Iterable[str] = ()
) -> tuple[ProgramFile, ...]:
    """Read and check several program files, in order; a refused file keeps its reason.

    A program file is named by its stem, and its results are written under that name, so a
    name already ``taken`` (the library's programs, the other programs of the command) or
    used by two files is refused before any file is read: ``P0.py`` would otherwise write its
    results over the baseline's. Names are compared without case, as a case-insensitive file
    system would.

    Raises:
        EmbeddingTTCError: a file cannot be read, or its name is taken.

    """
    files = [Path(p) for p in paths]
    used = {name.casefold(): f"the program {name!r}" for name in taken}
    for path in files:
        owner = used.get(path.stem.casefold())
        if owner is not None:
            raise EmbeddingTTCError(
                f"program file {path}: its name {path.stem!r} is taken by {owner}, and its "
                "results would overwrite that program's; rename the file"
            )
        used[path.stem.casefold()] = f"the program file {path}"
    names = tuple(task_names)
    return tuple(read_program_file(path, task_names=names) for path in files)
