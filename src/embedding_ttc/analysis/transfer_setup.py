"""The study a transfer run lays out: its tasks and programs, resolved and checked up front.

:func:`resolve_study` turns a :class:`~embedding_ttc.analysis.transfer_config.TransferConfig`
into the held-out and discovery tasks, the encoders, the programs (library names and groups,
program files, and the programs a search run discovered) and the oracle's, raising a user error
before anything is written or computed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from embedding_ttc.analysis.discovered import SEARCH_FRONTIER, AdmittedBy, discovered_paths
from embedding_ttc.analysis.head_store import HeadStore
from embedding_ttc.analysis.heads import LEARNED_HEAD, HeadConfig
from embedding_ttc.analysis.inputs import SearchRun, load_search_run
from embedding_ttc.analysis.manifest import SearchPrograms
from embedding_ttc.analysis.transfer_config import NO_DISCOVERY, TransferConfig
from embedding_ttc.analysis.transfer_events import (
    SearchProgramsChosen,
    TaskOutsideSuite,
    TransferEvent,
)
from embedding_ttc.analysis.transfer_report import default_oracle
from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.program_files.program_file import ProgramFile, read_program_files
from embedding_ttc.programs.catalog import PROGRAMS, resolve_program_names
from embedding_ttc.tasks.catalog import available_task_names, find_data_root, suite_tasks


@dataclass(frozen=True)
class Study:
    """What a transfer study lays out, resolved from its configuration.

    Attributes:
        encoders: the held-out encoders; the first is the discovery encoder.
        tasks: the held-out tasks.
        discovery: the discovery suite's name.
        disc_tasks: the discovery column's tasks (empty: no column).
        disc_encoder: the encoder of the discovery column (``None``: no column).
        data_root: the folder of task folders.
        search: the search run given (``None``: none given).
        programs: every program name of the study, program files and ``LearnedHead`` included.
        files: the program files, read and checked.
        chosen: the search run's programs that ``frontier`` named (``None``: no search run).
        oracle: the oracle's programs.
        heads: whether the learned-head baseline is in the study.

    """

    encoders: list[str]
    tasks: list[str]
    discovery: str
    disc_tasks: list[str]
    disc_encoder: str | None
    data_root: Path | None
    search: SearchRun | None
    programs: list[str]
    files: tuple[ProgramFile, ...]
    chosen: SearchPrograms | None
    oracle: list[str]
    heads: bool


def resolve_study(config: TransferConfig, tell: Callable[[TransferEvent], None]) -> Study:
    """The study ``config`` describes, its names resolved and checked (events told on the way).

    Raises:
        EmbeddingTTCError: unknown names, settings for tasks outside the matrix, learned heads
            with nothing to train on, a program file that cannot be read or whose name is
            taken, or ``discovery_only`` without a discovery column.

    """
    if not config.encoders:
        raise EmbeddingTTCError("name at least one encoder with --encoders A,B,C")
    encoders = list(config.encoders)
    heads = config.heads or LEARNED_HEAD in config.programs
    tasks = _heldout_tasks(config.suite, config.tasks, tell)
    discovery = config.discovery_suite
    disc_tasks = suite_tasks(discovery) if discovery and discovery != NO_DISCOVERY else []
    data_root = find_data_root(config.data_dir)
    search = load_search_run(config.search_run) if config.search_run is not None else None
    programs, files, chosen = _programs(config, search, [*tasks, *disc_tasks], data_root, tell)
    programs += [f.name for f in files]
    oracle = (
        _oracle_names(config.oracle, files)
        if config.oracle is not None
        else default_oracle(programs)  # as `report` takes it from the manifest's programs
    )
    if heads:
        programs.append(LEARNED_HEAD)
    if not programs:
        raise EmbeddingTTCError("name programs with --programs A,B or --program-file F")
    if heads and not disc_tasks:
        _check_stored_heads(config.out, encoders, discovery, config.head_seed)
    disc_encoder = encoders[0] if disc_tasks else None
    _check_task_settings(config, [*tasks, *disc_tasks])

    if config.discovery_only and disc_encoder is None:
        raise EmbeddingTTCError(
            f"--discovery-only computes the discovery column; --discovery-suite {discovery} "
            "has none"
        )
    return Study(
        encoders=encoders,
        tasks=tasks,
        discovery=discovery,
        disc_tasks=disc_tasks,
        disc_encoder=disc_encoder,
        data_root=data_root,
        search=search,
        programs=programs,
        files=files,
        chosen=chosen,
        oracle=oracle,
        heads=heads,
    )


def _programs(
    config: TransferConfig,
    search: SearchRun | None,
    tasks: list[str],
    data_root: Path | None,
    tell: Callable[[TransferEvent], None],
) -> tuple[list[str], tuple[ProgramFile, ...], SearchPrograms | None]:
    """The library programs named, the program files, and the search run's programs chosen.

    ``frontier`` names the search run's programs when there is a run (``select`` chooses
    them), else the library's group. Program files are read and checked here, before anything
    is written: a name taken by a library program (or ``LearnedHead``) or by another file is
    an error; a file the static checks refuse is kept, and its cells fail as ``rejected``.
    """
    from_search = search is not None and SEARCH_FRONTIER in config.programs
    named = [
        p
        for p in config.programs
        if p != LEARNED_HEAD and not (from_search and p == SEARCH_FRONTIER)
    ]
    library = resolve_program_names(named)
    paths = list(config.program_files)
    chosen: SearchPrograms | None = None
    if from_search and search is not None:
        found = discovered_paths(search, config.select)
        tell(SearchProgramsChosen(found.run, found.program_ids))
        paths += found.paths
        chosen = SearchPrograms(
            selection=_qualified_name(config.select), program_ids=list(found.program_ids)
        )
    if not paths:
        return library, (), chosen
    # The task-universal check refuses a task's name in a program: every task known here.
    known = {*available_task_names(data_root), *tasks}
    files = read_program_files(
        paths,
        task_names=known,
        taken=[*PROGRAMS, *library, LEARNED_HEAD],
    )
    return library, files, chosen


def _qualified_name(function: object) -> str:
    """What a selection is, for the manifest.

    An :class:`AdmittedBy` says its rule and objective; a function is ``module.qualname``
    (its ``repr`` otherwise).
    """
    if isinstance(function, AdmittedBy):
        return str(function)
    module, name = getattr(function, "__module__", None), getattr(function, "__qualname__", None)
    return f"{module}.{name}" if module and name else repr(function)


def _oracle_names(names: tuple[str, ...], files: tuple[ProgramFile, ...]) -> list[str]:
    """The oracle's programs: program files by name, library names and groups resolved."""
    file_names = {f.name for f in files}
    out: list[str] = []
    for name in names:
        out += [name] if name in file_names else resolve_program_names([name])
    return list(dict.fromkeys(out))


def _heldout_tasks(
    suite: str, tasks: tuple[str, ...], tell: Callable[[TransferEvent], None]
) -> list[str]:
    """The held-out tasks: those asked for (each outside the suite said), else the suite's."""
    in_suite = suite_tasks(suite)
    if not tasks:
        return in_suite
    for t in tasks:
        if t not in in_suite:
            tell(TaskOutsideSuite(t, suite))
    return list(dict.fromkeys(tasks))


def _check_task_settings(config: TransferConfig, tasks: list[str]) -> None:
    """The shortlist and the query sample name only tasks of the matrix."""
    for setting in (config.shortlist, config.sample):
        unknown = [t for t, _ in setting.per_task if t not in tasks]
        if unknown:
            raise EmbeddingTTCError(
                f"{setting.option} names tasks outside the matrix: {', '.join(unknown)}; its "
                f"tasks: {', '.join(tasks)}"
            )


def _check_stored_heads(out: Path, encoders: list[str], discovery: str, seed: int) -> None:
    """Without discovery tasks, LearnedHead cells need every encoder's heads already stored."""
    store = HeadStore(out)
    lacking = [e for e in encoders if store.matching_record(e, HeadConfig(seed=seed)) is None]
    if lacking:
        raise EmbeddingTTCError(
            f"{LEARNED_HEAD} trains on the discovery suite; --discovery-suite {discovery} "
            f"leaves nothing to train on, and {store.dir} holds no head (seed {seed}) for "
            f"{', '.join(lacking)}"
        )
