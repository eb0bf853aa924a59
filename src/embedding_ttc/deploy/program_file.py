"""A program found by the search, deployed from its file: read, checked, stored, run contained.

``index build --program-file F`` deploys a program that is not in the library: a search's
``RUN/programs/gNNNN.py`` (or any file defining ``def program(Q, D, S, ctx)``).
:func:`read_program_file` reads it and applies the search's static checks
(:mod:`embedding_ttc.program_files.checks`); its name (the file's stem) must not be a library
program's, compared without case, since the manifest, ``/health`` and the logs name the
program served by it. The index keeps a copy of the source with its sha256 and provenance
(:class:`~embedding_ttc.deploy.program_records.DiscoveredRecord`): a file edited or removed after
the build changes nothing in the index. Its recipe is derived at build time
(:mod:`embedding_ttc.deploy.derive`).

**Serving runs the stored source in the search's sandbox, never in-process.** A discovered
program passed the static checks, but those checks are not a sandbox
(:mod:`embedding_ttc.program_files.checks.source` lists ways around them), and the code was written
by a proposer, not reviewed as library code is. In the server process it would run with the
server's user, files and network, with callers choosing its inputs; a memory-unsafe numpy
trick would take the whole service down. In the sandbox the program runs in a contained
process (:mod:`embedding_ttc.program_files.sandbox.program`), and a failure is an error of
that request only. The deploy path also promises that deployed scores equal ``evaluate``'s,
and ``evaluate --program-file`` runs the file in that same sandbox: its child fixes
``PYTHONHASHSEED`` and the BLAS threads, which in-process would be the server's (a program
iterating over a set of strings could rank differently). A served program is loaded once
into a warm child that each call messages (:mod:`embedding_ttc.program_files.sandbox.warm`;
a process start per call cost about 0.1 s for a numpy-only program and 0.5 s with the
lexical primitives on 2 cores), and there is one
call per query (a program file is never served as ``independent``; see
:mod:`~embedding_ttc.deploy.probe`). A
program worth serving at library speed is worth reviewing and adding to the library with a
written recipe; it then runs in-process, as every library program does.

The stored source is checked again when the index is loaded: its sha256 against the manifest
(:class:`~embedding_ttc.deploy.errors.IndexCorruptError` when they differ), and the static
checks of the installed embedding-ttc (they may have become stricter since the build).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from embedding_ttc.deploy.errors import DeployError, IndexCorruptError
from embedding_ttc.deploy.program_records import DiscoveredRecord, Provenance
from embedding_ttc.deploy.provenance import provenance_of
from embedding_ttc.program_files.checks.rules import ProgramRejected
from embedding_ttc.program_files.checks.source import ParsedProgram, check_source
from embedding_ttc.program_files.sandbox.limits import DEFAULT_LIMITS, SandboxLimits
from embedding_ttc.program_files.sandbox.program import SandboxedProgram, source_sha256
from embedding_ttc.programs.catalog import PROGRAMS


@dataclass(frozen=True)
class ProgramFile:
    """A program file that passed the static checks, ready to be built into an index.

    Attributes:
        name: the program's name (the file's stem).
        source: the file's text.
        parsed: its syntax tree (what the derivation reads the lexical channels from).
        provenance: where it comes from.

    """

    name: str
    source: str
    parsed: ParsedProgram
    provenance: Provenance

    @property
    def sha256(self) -> str:
        """The SHA-256 of :attr:`source`."""
        return source_sha256(self.source)

    def sandboxed(self, limits: SandboxLimits = DEFAULT_LIMITS) -> SandboxedProgram:
        """The program, run in the sandbox on every call."""
        return SandboxedProgram(self.source, self.name, limits)


def _check(source: str, where: str, task_names: tuple[str, ...]) -> ParsedProgram:
    try:
        return check_source(source, task_names=task_names)
    except ProgramRejected as exc:
        detail = exc.reason.removeprefix(f"{exc.constraint}:").strip()
        raise DeployError(
            f"{where} fails the search's static check {exc.constraint!r}: {detail}"
        ) from None


def read_program_file(path: Path | str, *, task_names: tuple[str, ...] = ()) -> ProgramFile:
    """Read a program file and check it as the search would, before anything is encoded.

    Args:
        path: the file (``def program(Q, D, S, ctx)``).
        task_names: task names a string literal of the program must not equal (the
            ``task-universal`` check); the command line passes the tasks it knows.

    Raises:
        DeployError: the file is missing or not UTF-8 text, fails a static check (the message
            names the check), or is named like a library program.

    """
    path = Path(path)
    try:
        source = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DeployError(f"program file {path} does not exist") from None
    except UnicodeDecodeError as exc:
        raise DeployError(f"program file {path} is not UTF-8 text ({exc})") from None
    except OSError as exc:
        raise DeployError(f"cannot read program file {path}: {exc.strerror}") from None
    library = {name.casefold(): name for name in PROGRAMS}
    taken = library.get(path.stem.casefold())
    if taken is not None:
        raise DeployError(
            f"program file {path}: its name {path.stem!r} is the library program {taken!r} "
            "(names compare without case); an index of it would be taken for that program's, "
            "so rename the file"
        )
    parsed = _check(source, f"program file {path}", task_names)
    return ProgramFile(path.stem, source, parsed, provenance_of(path, source))


def stored_program(
    name: str, record: DiscoveredRecord, where: Path, limits: SandboxLimits = DEFAULT_LIMITS
) -> SandboxedProgram:
    """The program an index stores, checked again, to be run in the sandbox.

    Raises:
        IndexCorruptError: the stored source does not match its sha256.
        DeployError: the stored source fails a static check of this embedding-ttc.

    """
    if source_sha256(record.source) != record.sha256:
        raise IndexCorruptError(
            f"index {where}: the program source in its manifest does not match its sha256; "
            "rebuild the index"
        )
    _check(record.source, f"the program {name!r} stored in index {where}", ())
    return SandboxedProgram(record.source, name, limits)
