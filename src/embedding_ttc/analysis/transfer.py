"""A transfer study run: plan the matrix, prepare the heads, compute the missing cells, tabulate.

:func:`run_transfer` is what ``embedding-ttc transfer`` does, callable from Python with a
:class:`TransferConfig`. It computes the cells missing under ``OUT/cells`` (held-out suite ×
encoders × programs, plus the discovery suite on the first encoder for the discovery column),
then writes ``OUT/tables/<section>.{md,csv,tex}`` and ``OUT/tables/report.md``. Running the
same configuration again computes only what is still missing (or stale:
:mod:`embedding_ttc.analysis.staleness`).

Programs are the library's, named, and program files run in the sandbox
(:mod:`embedding_ttc.program_files.program_file`): those given (``program_files``) and, with a
search run and ``frontier`` among the programs, the programs the run discovered
(:mod:`embedding_ttc.analysis.discovered`; which ledger records, ``select`` decides). Their
cells are cells like any other; a program file that fails on a cell is a failure of that cell
with its sandbox status, and the study goes on.

Along the way it writes ``OUT/transfer.json`` (the manifest: the study's layout, settings,
search run and program files, read by ``report``), trains or reuses each encoder's learned
head when ``LearnedHead`` is among the programs (App. C;
:mod:`embedding_ttc.analysis.head_store`), and appends one record to ``OUT/runs.jsonl`` when
it ends, whether complete, failed or interrupted (:mod:`embedding_ttc.analysis.run_log`). What
happens is reported to a ``progress`` callback as events
(:data:`~embedding_ttc.analysis.transfer_events.TransferEvent`); the command line prints them.

The run's steps, in order: resolve and check the study
(:func:`~embedding_ttc.analysis.transfer_setup.resolve_study`), plan its cells, write the
manifest, find the cells to compute (training or reusing the learned heads on the way,
:mod:`embedding_ttc.analysis.transfer_heads`), compute them (logging the run however it ends),
then build the report and write the tables. Its configuration is
:class:`~embedding_ttc.analysis.transfer_config.TransferConfig`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from embedding_ttc import __version__
from embedding_ttc.analysis.cells import CellKey, CellStore
from embedding_ttc.analysis.discovered import validation_means
from embedding_ttc.analysis.groups import CellFailure, MatrixEnvironment
from embedding_ttc.analysis.inputs import SearchRun, load_search_run
from embedding_ttc.analysis.latency import read_latency
from embedding_ttc.analysis.manifest import read_manifest, search_run_path, write_manifest
from embedding_ttc.analysis.matrix import MatrixOutcome, MatrixProgress, run_matrix
from embedding_ttc.analysis.plan import Plan, plan
from embedding_ttc.analysis.run_log import RunStatus, TransferRun, append_run
from embedding_ttc.analysis.staleness import to_compute
from embedding_ttc.analysis.tables import write_tables
from embedding_ttc.analysis.transfer_config import NO_DISCOVERY, TransferConfig
from embedding_ttc.analysis.transfer_events import (
    HeadReady,
    HeadTraining,
    MatrixPlanned,
    SearchProgramsChosen,
    TaskOutsideSuite,
    TransferEvent,
)
from embedding_ttc.analysis.transfer_heads import prepare_transfer_heads
from embedding_ttc.analysis.transfer_report import TransferReport
from embedding_ttc.analysis.transfer_setup import Study, resolve_study
from embedding_ttc.executors import Executor, open_executor

PURPOSE = "the Ray executor of the transfer matrix"
"""What needs Ray, in the install hint of ``transfer --executor ray`` without the extra."""

# The configuration and the events are imported from here by callers of run_transfer.
__all__ = [
    "NO_DISCOVERY",
    "HeadReady",
    "HeadTraining",
    "MatrixPlanned",
    "SearchProgramsChosen",
    "TaskOutsideSuite",
    "TransferConfig",
    "TransferEvent",
    "TransferOutcome",
    "run_transfer",
]


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
    study = resolve_study(config, tell)
    study_plan, the_plan = _plans(config, study)
    store = CellStore(config.out)
    _write_manifest(config, study)
    env = _environment(config, study)
    sources = env.sources()
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    run_start = time.perf_counter()
    absent, stale_keys = _cells_to_compute(config, study, the_plan, store, env, sources, tell)
    missing = len(absent) + len(stale_keys)
    tell(MatrixPlanned(len(the_plan), missing, len(stale_keys), config.executor))
    start = time.perf_counter()
    outcome = _compute(config, the_plan, store, env, executor, missing, started, run_start, tell)
    wall = time.perf_counter() - start
    report = _report(config, study, store, study_plan)
    planned = set(the_plan)
    return TransferOutcome(
        report=report,
        matrix=outcome,
        tables=config.out / "tables",
        seconds=wall,
        planned_missing=sum(1 for k in report.missing if k in planned),
    )


def _ignore(event: TransferEvent) -> None:
    """The progress callback of a run that reports to no one."""


def _plans(config: TransferConfig, study: Study) -> tuple[Plan, Plan]:
    """What the tables lay out (the study), and what this run computes (maybe its column)."""
    disc_encoder, programs = study.disc_encoder, study.programs
    column = plan([disc_encoder], study.disc_tasks, programs) if disc_encoder else plan([], [], [])
    study_plan = plan(study.encoders, study.tasks, programs) + column
    return study_plan, column if config.discovery_only else study_plan


def _write_manifest(config: TransferConfig, study: Study) -> None:
    """Write ``OUT/transfer.json``: the study's layout, settings, search run and programs."""
    write_manifest(
        config.out,
        command=config.command,
        suite=config.suite,
        tasks=study.tasks,
        discovery_suite=study.discovery,
        discovery_tasks=study.disc_tasks,
        encoders=study.encoders,
        programs=study.programs,
        bootstrap=config.bootstrap,
        shortlist=config.shortlist,
        sample=config.sample,
        executor=config.executor,
        search_run=config.search_run,
        program_files=study.files,
        search_programs=study.chosen,
    )


def _environment(config: TransferConfig, study: Study) -> MatrixEnvironment:
    """Where the cells' groups find their data, encoders, heads and program files."""
    return MatrixEnvironment(
        data_root=study.data_root,
        cache_dir=config.cache_dir,
        backend=config.backend,
        device=config.device,
        use_cache=config.use_cache,
        heads_root=config.out if study.heads else None,
        program_files=study.files,
        program_limits=config.program_limits,
    )


def _cells_to_compute(
    config: TransferConfig,
    study: Study,
    the_plan: Plan,
    store: CellStore,
    env: MatrixEnvironment,
    sources: dict[str, str],
    tell: Callable[[TransferEvent], None],
) -> tuple[list[CellKey], list[CellKey]]:
    """The planned cells absent and stale, once the learned heads are ready."""
    shortlist, sample = config.shortlist, config.sample
    absent, stale_keys = to_compute(the_plan, store, shortlist, sample=sample, sources=sources)
    if study.heads and prepare_transfer_heads(
        config, the_plan, [*absent, *stale_keys], store, env, study.disc_tasks, tell
    ):  # a retrained head dropped its stale cells: they are to compute now
        absent, stale_keys = to_compute(the_plan, store, shortlist, sample=sample, sources=sources)
    return absent, stale_keys


def _compute(
    config: TransferConfig,
    the_plan: Plan,
    store: CellStore,
    env: MatrixEnvironment,
    executor: Executor | None,
    missing: int,
    started: str,
    run_start: float,
    tell: Callable[[TransferEvent], None],
) -> MatrixOutcome:
    """Compute the missing cells, and log the run however it ends (even interrupted)."""
    tally = {"computed": 0, "failed": 0}  # what the run log counts, should the run be cut short

    def counted(update: MatrixProgress) -> None:
        tally["failed"] += isinstance(update.event, CellFailure)
        tally["computed"] = update.done - tally["failed"]  # done: cells written or failed
        tell(update)

    status: RunStatus = "error"
    opened: AbstractContextManager[Executor] = (
        nullcontext(executor)
        if executor is not None
        else open_executor(config.executor, address=config.ray_address, purpose=PURPOSE)
    )
    try:
        with opened as where:
            outcome = run_matrix(
                the_plan,
                store,
                where,
                counted,
                env=env,
                bootstrap=config.bootstrap,
                shortlist=config.shortlist,
                sample=config.sample,
            )
        status = "complete" if outcome.complete else "incomplete"
    except KeyboardInterrupt:
        status = "interrupted"
        raise
    finally:
        wall_run = time.perf_counter() - run_start
        _log_run(config, started, wall_run, status, the_plan, len(the_plan) - missing, tally)
    return outcome


def _report(
    config: TransferConfig, study: Study, store: CellStore, study_plan: Plan
) -> TransferReport:
    """The report over every present cell of the study, its tables written."""
    out = config.out
    report = TransferReport.from_cells(
        store.present(study_plan),
        encoders=study.encoders,
        tasks=study.tasks,
        programs=study.programs,
        discovery_encoder=study.disc_encoder,
        discovery_tasks=study.disc_tasks,
        oracle_programs=study.oracle,
        validation=_validation(out, study.search),
        latency=read_latency(out),
    )
    write_tables(out / "tables", report)
    return report


def _validation(out: Path, search: SearchRun | None) -> dict[str, float] | None:
    """Discovered programs' validation mean Δ, from the study's search run (if it has one).

    ``search`` is the run given to this command; without one, the run an earlier command
    recorded in the manifest is read.
    """
    if search is None:
        path = search_run_path(out, read_manifest(out), None)
        search = load_search_run(path) if path is not None else None
    return validation_means(search.records) if search is not None else None


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
