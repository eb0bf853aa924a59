"""A transfer study run: plan the matrix, prepare the heads, compute the missing cells, tabulate.

:func:`run_transfer` is what ``embedding-ttc transfer`` does, callable from Python with a
:class:`TransferConfig`. It computes the cells missing under ``OUT/cells`` (held-out suite ×
encoders × programs, plus the discovery suite on the first encoder for the discovery column),
then writes ``OUT/tables/<section>.{md,csv,tex}`` and ``OUT/tables/report.md``. Running the
same configuration again computes only what is still missing (or stale:
:mod:`embedding_ttc.analysis.staleness`).

Programs are the library's, named, and program files run in the sandbox
(:mod:`embedding_ttc.analysis.program_files`): those given (``program_files``) and, with a
search run and ``frontier`` among the programs, the programs the run discovered
(:mod:`embedding_ttc.analysis.discovered`; which ledger records, ``select`` decides). Their
cells are cells like any other; a program file that fails on a cell is a failure of that cell
with its sandbox status, and the study goes on.

Along the way it writes ``OUT/transfer.json`` (the manifest: the study's layout, settings,
search run and program files, read by ``report``), trains or reuses each encoder's learned
head when ``LearnedHead`` is among the programs (App. C;
:mod:`embedding_ttc.analysis.head_store`), and appends one record to ``OUT/runs.jsonl`` when
it ends, whether complete, failed or interrupted (:mod:`embedding_ttc.analysis.run_log`). What
happens is reported to a ``progress`` callback as events (:data:`TransferEvent`); the command
line prints them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from embedding_ttc import __version__
from embedding_ttc.analysis.cells import BootstrapConfig, CellKey, CellStore
from embedding_ttc.analysis.discovered import (
    SEARCH_FRONTIER,
    AdmittedBy,
    Selection,
    admitted_programs,
    discovered_paths,
    validation_means,
)
from embedding_ttc.analysis.executors import Executor, make_executor
from embedding_ttc.analysis.groups import CellFailure, MatrixEnvironment
from embedding_ttc.analysis.head_store import HeadStore, prepare_heads
from embedding_ttc.analysis.heads import LEARNED_HEAD, HeadConfig, embed_tasks
from embedding_ttc.analysis.inputs import SearchRun, load_search_run
from embedding_ttc.analysis.manifest import (
    SearchPrograms,
    read_manifest,
    search_run_path,
    write_manifest,
)
from embedding_ttc.analysis.matrix import MatrixOutcome, MatrixProgress, run_matrix
from embedding_ttc.analysis.plan import Plan, QuerySample, ShortlistPolicy, plan
from embedding_ttc.analysis.program_files import FileProgram, load_file_programs
from embedding_ttc.analysis.run_log import RunStatus, TransferRun, append_run
from embedding_ttc.analysis.staleness import to_compute
from embedding_ttc.analysis.tables import write_tables
from embedding_ttc.analysis.transfer_report import TransferReport, default_oracle
from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.program_files.sandbox.limits import DEFAULT_LIMITS, SandboxLimits
from embedding_ttc.programs.catalog import PROGRAMS, resolve_program_names
from embedding_ttc.tasks.catalog import available_task_names, find_data_root, suite_tasks

NO_DISCOVERY = "none"
"""The discovery suite that means "no discovery column"."""


@dataclass(frozen=True)
class TransferConfig:
    """What a transfer run computes, and where.

    Attributes:
        out: the matrix directory: cells, tables, manifest, run log and learned heads.
        encoders: the held-out encoders; the first is the discovery encoder.
        programs: program names, groups (``all``, ``rocchio-grid``) and ``LearnedHead``;
            with a ``search_run``, ``frontier`` names the run's programs that ``select``
            chooses (without one, it is the library's group of the paper's frontier).
        program_files: program files evaluated in the sandbox, each under its file's stem.
        suite: the held-out suite.
        tasks: only these held-out tasks (empty: every task of ``suite``).
        discovery_suite: the suite of the discovery column, computed on the first encoder
            (:data:`NO_DISCOVERY`: no column).
        discovery_only: compute only the discovery column's cells (a piece of a study run in
            pieces).
        oracle: the oracle's program set (``None``: :func:`default_oracle` of the programs).
        heads: add the learned-head baseline (as naming ``LearnedHead`` in ``programs`` does).
        head_seed: the seed of the heads' split and training.
        search_run: the search run the programs came from, recorded in the manifest (``None``:
            the one an earlier run recorded).
        select: which ledger records of ``search_run`` ``frontier`` names (default: the
            frontier's admitted programs, P0 out).
        program_limits: the sandbox's limits of every call of a program file.
        bootstrap: paired-bootstrap resamples per cell and base seed.
        shortlist: which tasks are scored over a dense shortlist, and how long it is.
        sample: which tasks are scored on a seeded sample of their queries, and how many.
        executor: where groups run (``inprocess`` or ``ray``), recorded in the manifest and
            the run log.
        ray_address: the Ray cluster of the ``ray`` executor (``None``: ``RAY_ADDRESS``, else
            a local Ray).
        data_dir: folder of task folders (``None``: the default data root).
        cache_dir: the embedding cache (``None``: the default cache directory).
        use_cache: wrap encoders in the on-disk embedding cache.
        backend: the encoder runtime.
        device: where encoders run (``auto``: each process takes its GPU if it has one); not
            recorded in the manifest: it changes where cells are computed, not what they are.
        command: the command line recorded in the manifest and the run log.

    """

    out: Path
    encoders: tuple[str, ...]
    programs: tuple[str, ...]
    program_files: tuple[Path, ...] = ()
    suite: str = "heldout"
    tasks: tuple[str, ...] = ()
    discovery_suite: str = "discovery"
    discovery_only: bool = False
    oracle: tuple[str, ...] | None = None
    heads: bool = False
    head_seed: int = 0
    search_run: Path | None = None
    select: Selection = admitted_programs
    program_limits: SandboxLimits = DEFAULT_LIMITS
    bootstrap: BootstrapConfig = field(default_factory=BootstrapConfig)
    shortlist: ShortlistPolicy = field(default_factory=ShortlistPolicy)
    sample: QuerySample = field(default_factory=QuerySample)
    executor: str = "inprocess"
    ray_address: str | None = None
    data_dir: Path | None = None
    cache_dir: Path | None = None
    use_cache: bool = True
    backend: str = "torch"
    device: str = "auto"
    command: tuple[str, ...] = ()


@dataclass(frozen=True)
class TaskOutsideSuite:
    """A task asked for is not in the held-out suite (it is computed all the same)."""

    task: str
    suite: str


@dataclass(frozen=True)
class SearchProgramsChosen:
    """The programs of a search run that ``frontier`` names in this run (maybe none)."""

    run: Path
    program_ids: tuple[str, ...]


@dataclass(frozen=True)
class HeadTraining:
    """An encoder's learned head is about to be trained on the discovery tasks."""

    encoder: str
    n_tasks: int


@dataclass(frozen=True)
class HeadReady:
    """An encoder's learned head is ready: trained now or reused from its record.

    Attributes:
        encoder: the encoder.
        reused: whether the stored head was reused.
        record: where its record is.
        chosen: the chosen head family.
        validation_ndcg_at_10: the chosen family's validation nDCG@10 (nan without one).
        dropped: stale ``LearnedHead`` cells deleted because the head was retrained.

    """

    encoder: str
    reused: bool
    record: Path
    chosen: str
    validation_ndcg_at_10: float
    dropped: int


@dataclass(frozen=True)
class MatrixPlanned:
    """What the run is about to compute: planned cells, those present, those to compute."""

    planned: int
    to_compute: int
    stale: int
    executor: str

    @property
    def present(self) -> int:
        """Planned cells already stored and current."""
        return self.planned - self.to_compute


TransferEvent = (
    TaskOutsideSuite
    | SearchProgramsChosen
    | HeadTraining
    | HeadReady
    | MatrixPlanned
    | MatrixProgress
)
"""What :func:`run_transfer` reports to its ``progress`` callback, in order."""


@dataclass(frozen=True)
class TransferOutcome:
    """What a transfer run did.

    Attributes:
        report: the transfer report over the whole study (every cell present).
        matrix: the cells computed, restatted and failed by this run.
        tables: the folder the tables were written to.
        seconds: wall time of the matrix's computation (heads' training excluded).
        planned_missing: cells of this run's plan still missing (failed this time).

    """

    report: TransferReport
    matrix: MatrixOutcome
    tables: Path
    seconds: float
    planned_missing: int


def run_transfer(
    config: TransferConfig,
    *,
    progress: Callable[[TransferEvent], None] | None = None,
    executor: Executor | None = None,
) -> TransferOutcome:
    """Compute the missing cells of the transfer matrix and write its tables.

    Args:
        config: what to compute, and where.
        progress: called with every event as it happens (:data:`TransferEvent`).
        executor: where groups run (default: the one ``config.executor`` names).

    Raises:
        EmbeddingTTCError: on a user error (unknown names, settings for tasks outside the
            matrix, learned heads with nothing to train on, a program file that cannot be
            read or whose name is taken), before any cell is computed.

    """
    tell = progress or _ignore
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
    column = plan([disc_encoder], disc_tasks, programs) if disc_encoder else plan([], [], [])
    study = plan(encoders, tasks, programs) + column  # what the tables lay out
    the_plan = column if config.discovery_only else study  # what this run computes
    out = config.out
    store = CellStore(out)
    write_manifest(
        out,
        command=config.command,
        suite=config.suite,
        tasks=tasks,
        discovery_suite=discovery,
        discovery_tasks=disc_tasks,
        encoders=encoders,
        programs=programs,
        bootstrap=config.bootstrap,
        shortlist=config.shortlist,
        sample=config.sample,
        executor=config.executor,
        search_run=config.search_run,
        program_files=files,
        search_programs=chosen,
    )
    env = MatrixEnvironment(
        data_root=data_root,
        cache_dir=config.cache_dir,
        backend=config.backend,
        device=config.device,
        use_cache=config.use_cache,
        heads_root=out if heads else None,
        program_files=files,
    )
    sources = env.sources()
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    run_start = time.perf_counter()
    shortlist, sample = config.shortlist, config.sample
    absent, stale_keys = to_compute(the_plan, store, shortlist, sample=sample, sources=sources)
    if heads and _prepare_heads(
        config, the_plan, [*absent, *stale_keys], store, env, disc_tasks, tell
    ):  # a retrained head dropped its stale cells: they are to compute now
        absent, stale_keys = to_compute(the_plan, store, shortlist, sample=sample, sources=sources)
    missing = len(absent) + len(stale_keys)
    tell(MatrixPlanned(len(the_plan), missing, len(stale_keys), config.executor))

    tally = {"computed": 0, "failed": 0}  # what the run log counts, should the run be cut short

    def counted(update: MatrixProgress) -> None:
        tally["failed"] += isinstance(update.event, CellFailure)
        tally["computed"] = update.done - tally["failed"]  # done: cells written or failed
        tell(update)

    start = time.perf_counter()
    status: RunStatus = "error"
    try:
        outcome = run_matrix(
            the_plan,
            store,
            executor or make_executor(config.executor, address=config.ray_address),
            counted,
            env=env,
            bootstrap=config.bootstrap,
            shortlist=shortlist,
            sample=sample,
        )
        status = "complete" if outcome.complete else "incomplete"
    except KeyboardInterrupt:
        status = "interrupted"
        raise
    finally:
        wall_run = time.perf_counter() - run_start
        _log_run(config, started, wall_run, status, the_plan, len(the_plan) - missing, tally)
    wall = time.perf_counter() - start
    report = TransferReport.from_cells(
        store.present(study),
        encoders=encoders,
        tasks=tasks,
        programs=programs,
        discovery_encoder=disc_encoder,
        discovery_tasks=disc_tasks,
        oracle_programs=oracle,
        validation=_validation(out, search),
    )
    write_tables(out / "tables", report)
    planned = set(the_plan)
    return TransferOutcome(
        report=report,
        matrix=outcome,
        tables=out / "tables",
        seconds=wall,
        planned_missing=sum(1 for k in report.missing if k in planned),
    )


def _ignore(event: TransferEvent) -> None:
    """The progress callback of a run that reports to no one."""


def _programs(
    config: TransferConfig,
    search: SearchRun | None,
    tasks: list[str],
    data_root: Path | None,
    tell: Callable[[TransferEvent], None],
) -> tuple[list[str], tuple[FileProgram, ...], SearchPrograms | None]:
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
    files = load_file_programs(
        paths,
        limits=config.program_limits,
        task_names=known,
        taken=[*PROGRAMS, *library, LEARNED_HEAD],
    )
    return library, files, chosen


def _validation(out: Path, search: SearchRun | None) -> dict[str, float] | None:
    """Discovered programs' validation mean Δ, from the study's search run (if it has one).

    ``search`` is the run given to this command; without one, the run an earlier command
    recorded in the manifest is read.
    """
    if search is None:
        path = search_run_path(out, read_manifest(out), None)
        search = load_search_run(path) if path is not None else None
    return validation_means(search.records) if search is not None else None


def _qualified_name(function: object) -> str:
    """What a selection is, for the manifest.

    An :class:`AdmittedBy` says its rule and objective; a function is ``module.qualname``
    (its ``repr`` otherwise).
    """
    if isinstance(function, AdmittedBy):
        return str(function)
    module, name = getattr(function, "__module__", None), getattr(function, "__qualname__", None)
    return f"{module}.{name}" if module and name else repr(function)


def _oracle_names(names: tuple[str, ...], files: tuple[FileProgram, ...]) -> list[str]:
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


def _prepare_heads(
    config: TransferConfig,
    the_plan: Plan,
    compute: list[CellKey],
    store: CellStore,
    env: MatrixEnvironment,
    disc_tasks: list[str],
    tell: Callable[[TransferEvent], None],
) -> bool:
    """Train (or reuse) the learned head of every encoder with LearnedHead cells; say which.

    Returns whether a retrained head dropped stale cells.

    Without discovery tasks (``--discovery-suite none``) the stored heads are reused, whatever
    tasks they were trained on (:func:`_check_stored_heads` made sure they exist).
    """

    def data(encoder: str) -> Any:
        tell(HeadTraining(encoder, len(disc_tasks)))
        return embed_tasks(env.encoder(encoder), [env.task(t) for t in disc_tasks])

    heads = HeadStore(config.out)  # the environment's heads_root
    tasks = disc_tasks or None
    dropped_any = False
    head_config = HeadConfig(seed=config.head_seed)
    for done in prepare_heads(the_plan, store, heads, head_config, data, tasks, compute):
        r = done.record
        dropped_any = dropped_any or bool(done.dropped)
        chosen = r.family(r.chosen)
        val = chosen.validation_ndcg_at_10 if chosen is not None else float("nan")
        record = heads.record_path(done.encoder)
        tell(HeadReady(done.encoder, done.reused, record, r.chosen, val, len(done.dropped)))
    return dropped_any


def _log_run(
    config: TransferConfig,
    started: str,
    wall: float,
    status: RunStatus,
    the_plan: Plan,
    already: int,
    tally: dict[str, int],
) -> None:
    """Append this run to ``OUT/runs.jsonl`` (:mod:`embedding_ttc.analysis.run_log`)."""
    run = TransferRun(
        command=list(config.command),
        started_at=started,
        wall_seconds=round(wall, 3),
        status=status,
        planned=len(the_plan),
        computed=tally["computed"],
        failed=tally["failed"],
        already=already,
        executor=config.executor,
        embedding_ttc=__version__,
        cpus=os.cpu_count(),
    )
    append_run(config.out, run)
