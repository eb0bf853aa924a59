"""The transfer matrix: compute the planned cells missing from the store, write each as it comes.

:func:`run_matrix` takes a :class:`~embedding_ttc.analysis.plan.Plan`, finds what is absent or
stale in the :class:`~embedding_ttc.analysis.cells.CellStore`
(:mod:`embedding_ttc.analysis.staleness`; a program file's cells against the sources the
environment carries), groups it by (encoder, task) (:mod:`embedding_ttc.analysis.groups`) and
runs the groups over an executor (:mod:`embedding_ttc.executors`: in process or as Ray tasks);
every cell is written as it arrives, so an interrupted run resumes where it stopped. A program
that fails on a cell is a :class:`~embedding_ttc.analysis.groups.CellFailure` with its status
and reason, and the run goes on; an encoder or task that cannot be loaded is a user error and
ends the run (on Ray, where a worker loads them, the group's cells fail instead).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from embedding_ttc.analysis.cells import BootstrapConfig, Cell, CellKey, CellStore
from embedding_ttc.analysis.groups import CellFailure, Event, MatrixEnvironment, run_groups
from embedding_ttc.analysis.plan import Plan, QuerySample, ShortlistPolicy, group_jobs
from embedding_ttc.analysis.staleness import restat_existing, to_compute
from embedding_ttc.executors import Executor, InProcessExecutor


@dataclass(frozen=True)
class MatrixProgress:
    """Where the run is: cells finished (computed or failed) out of those missing at start."""

    done: int
    total: int
    event: Event


ProgressFn = Callable[[MatrixProgress], None]


@dataclass(frozen=True)
class MatrixOutcome:
    """What a run did."""

    computed: tuple[CellKey, ...]
    failed: tuple[CellFailure, ...]
    restatted: tuple[CellKey, ...]
    already: int
    stale: tuple[CellKey, ...] = ()

    @property
    def complete(self) -> bool:
        """Every planned cell exists."""
        return not self.failed


def run_matrix(
    plan: Plan,
    store: CellStore,
    executor: Executor | None = None,
    progress: ProgressFn | None = None,
    *,
    env: MatrixEnvironment | None = None,
    bootstrap: BootstrapConfig | None = None,
    shortlist: ShortlistPolicy | None = None,
    sample: QuerySample | None = None,
) -> MatrixOutcome:
    """Compute the cells of ``plan`` missing from ``store`` and write each as it arrives.

    Args:
        plan: the cells wanted.
        store: where cells live; present cells are not recomputed (resume).
        executor: where groups run (default
            :class:`~embedding_ttc.executors.InProcessExecutor`).
        progress: called after every event with the running count.
        env: how encoders, tasks and programs are obtained (default
            :class:`MatrixEnvironment`); its program files' cells are stale when stored from
            another source.
        bootstrap: resamples and base seed (default 10,000 and 0); stored cells made with
            another configuration get their statistics recomputed from their per-query scores.
        shortlist: which tasks are scored over a shortlist (default: none); stored cells made
            under another setting are recomputed and overwritten.
        sample: which tasks are scored on a sample of their queries (default: none); the same
            holds for cells stored under another sample.

    """
    executor = executor or InProcessExecutor()
    env = env or MatrixEnvironment()
    bootstrap = bootstrap or BootstrapConfig()
    policy = shortlist or ShortlistPolicy()
    absent, stale = to_compute(plan, store, policy, sample=sample, sources=env.sources())
    wanted = set(absent) | set(stale)
    missing = [k for k in plan if k in wanted]
    restatted = restat_existing([k for k in plan if k not in wanted], store, bootstrap)
    computed: list[CellKey] = []
    failed: list[CellFailure] = []
    for event in run_groups(executor, group_jobs(missing, bootstrap, policy, sample), env):
        if isinstance(event, Cell) and event.key in wanted:
            store.write(event)
            computed.append(event.key)
        elif isinstance(event, CellFailure):
            failed.append(event)
        if progress is not None:
            progress(MatrixProgress(len(computed) + len(failed), len(missing), event))
    return MatrixOutcome(
        computed=tuple(computed),
        failed=tuple(failed),
        restatted=tuple(restatted),
        already=len(plan) - len(missing),
        stale=tuple(stale),
    )
