"""A program found by the search, deployed from its file: read, checked, stored, run contained.

``index build --program-file F`` deploys a program that is not in the library: a search's
``RUN/programs/gNNNN.py`` (or any file defining ``def program(Q, D, S, ctx)``).
:func:`read_deployable` reads it as every command reads a program file
(:class:`~embedding_ttc.program_files.program_file.ProgramFile`) and refuses one that failed
the search's static checks (:mod:`embedding_ttc.program_files.checks`); its name (the file's
stem) must not be a library program's, compared without case, since the manifest, ``/health``
and the logs name the program served by it. The index keeps a copy of the source with its
sha256 and provenance (:class:`~embedding_ttc.deploy.program_records.DiscoveredRecord`): a file
edited or removed after the build changes nothing in the index. Its recipe is derived at build time
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

from pathlib import Path

from embedding_ttc.deploy.errors import DeployError, IndexCorruptError
from embedding_ttc.deploy.program_records import DiscoveredRecord, Provenance
from embedding_ttc.deploy.provenance import provenance_of
from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.program_files.checks.rules import ProgramRejected
from embedding_ttc.program_files.checks.source import ParsedProgram, check_source
from embedding_ttc.program_files.program_file import ProgramFile, read_program_file
from embedding_ttc.program_files.sandbox.limits import DEFAULT_LIMITS, SandboxLimits
from embedding_ttc.program_files.sandbox.program import SandboxedProgram, source_sha256
from embedding_ttc.programs.catalog import PROGRAMS


def _check(source: str, where: str, task_names: tuple[str, ...]) -> ParsedProgram:
    try:
        return check_source(source, task_names=task_names)
    except ProgramRejected as exc:
        raise _refused(exc, where) from None


def _refused(exc: ProgramRejected, where: str) -> DeployError:
    detail = exc.reason.removeprefix(f"{exc.constraint}:").strip()
    return DeployError(f"{where} fails the search's static check {exc.constraint!r}: {detail}")


def deployable(file: ProgramFile) -> ProgramFile:
    """``file`` if an index may be built of it: checks passed, and no library program's name.

    Raises:
        DeployError: the file is named like a library program, or failed a static check (the
            message names the check).

    """
    library = {name.casefold(): name for name in PROGRAMS}
    taken = library.get(file.name.casefold())
    if taken is not None:
        raise DeployError(
            f"program file {file.path}: its name {file.name!r} is the library program "
            f"{taken!r} (names compare without case); an index of it would be taken for that "
            "program's, so rename the file"
        )
    if file.rejection is not None:
        raise _refused(file.rejection, f"program file {file.path}")
    return file


def read_deployable(path: Path | str, *, task_names: tuple[str, ...] = ()) -> ProgramFile:
    """Read a program file and check it as the search would, before anything is encoded.

    The file is read as every command reads one
    (:func:`~embedding_ttc.program_files.program_file.read_program_file`), then
    :func:`deployable` applies the deployment's refusals.

    Args:
        path: the file (``def program(Q, D, S, ctx)``).
        task_names: task names a string literal of the program must not equal (the
            ``task-universal`` check); the command line passes the tasks it knows.

    Raises:
        DeployError: the file is missing or not UTF-8 text, fails a static check (the message
            names the check), or is named like a library program.

    """
    try:
        file = read_program_file(path, task_names=task_names)
    except EmbeddingTTCError as exc:
        raise DeployError(str(exc)) from None
    return deployable(file)


def provenance(file: ProgramFile) -> Provenance:
    """Where ``file`` comes from: its search run, generation and parent, when it says so."""
    return provenance_of(file.path, file.source)


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
