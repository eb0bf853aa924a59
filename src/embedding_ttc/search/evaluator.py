"""Scoring one candidate on every discovery task (constraints 3 and 6), under a compute lock.

:class:`SuiteEvaluator` holds the suite's tasks, the (cached) encoder and each task's P0
per-query nDCG@10. :meth:`SuiteEvaluator.evaluate` runs a program once as written on every task
(constraint 6) and returns each task's comparison with P0 (ΔnDCG@10, the mean over queries of
the per-query difference, the paper's footnote, and the per-query W/T/L), W/T/L over tasks at
±0.001 and the suite's cost ratio
``c = (ΣT_base + ΣT_prog) / ΣT_base`` (calls summed over tasks, as in the discovery table).

Determinism (constraint 3) is checked on the smallest task, which runs first and twice: the
two score matrices must be bit-identical. Any failure on any task ends the evaluation with
the failure's status; nothing is averaged over a subset of the tasks.

Where a candidate's runs happen is a seam: an :class:`~embedding_ttc.executors.Executor`
computes the jobs (the smallest task twice, then every other task once, in that order), in
this process by default or as Ray tasks (:func:`~embedding_ttc.search.task_runs.run_jobs`);
the evaluator orchestrates and scores. The first failing job in that order decides the status
and reason, whichever executor ran it. P0 and the reference are computed here, once per task,
with the evaluator's encoder.

:class:`ComputeLock` keeps one evaluation at a time on a machine (an ``flock`` on a file in
the cache directory), so two searches cannot skew each other's timings. It is held for the
whole evaluation, Ray tasks included: with a local Ray it serialises evaluations on the machine
as in-process; on a cluster it serialises the evaluations of searches that share the lock file
(those started on this machine with the same cache directory) and does not reserve the
cluster's nodes, where other work may run beside a candidate and change its timings (not its
scores or counts).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path

import numpy as np

from embedding_ttc.encoders.base import Encoder
from embedding_ttc.encoders.named import NamedEncoder
from embedding_ttc.evaluation.comparison import (
    WTL,
    comparison_of,
    count_deep_losses,
    query_deltas,
)
from embedding_ttc.evaluation.evaluate import ProgramRun, run_programs
from embedding_ttc.evaluation.records import TaskResult
from embedding_ttc.executors import Executor, InProcessExecutor
from embedding_ttc.programs.base import Program
from embedding_ttc.programs.outcome import CandidateError, Status
from embedding_ttc.programs.p0 import P0
from embedding_ttc.runs.records import PartOutcome, SuiteScore, TaskDelta, Versus
from embedding_ttc.runs.split import PARTS, Part, QuerySplit
from embedding_ttc.search.task_runs import TaskJob, TaskRun, run_jobs
from embedding_ttc.tasks.task import RetrievalTask


class ComputeLock:
    """An exclusive, blocking, per-machine lock around evaluations (``fcntl.flock``).

    Args:
        path: the lock file (created if absent).
        on_wait: called once, with the path, when another process holds the lock.

    """

    def __init__(self, path: Path, on_wait: Callable[[Path], None] | None = None) -> None:
        self.path = path
        self.on_wait = on_wait

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the lock for the duration of the block."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if self.on_wait is not None:
                    self.on_wait(self.path)
                fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock


def _identical(runs: Sequence[TaskRun]) -> bool:
    """Whether every run gave the same scores as the first (bit for bit, query by query)."""
    first = runs[0].scores
    return all(
        all(np.array_equal(a, b) for a, b in zip(first, run.scores, strict=True))
        for run in runs[1:]
    )


class SuiteEvaluator:
    """Scores candidates on a fixed list of tasks with one encoder.

    Args:
        tasks: the discovery tasks, in suite order.
        encoder: the frozen encoder (wrap it in a cache: every candidate re-reads the base
            encoding and most program encodes repeat across candidates).
        lock: the compute lock (``None``: no locking, for tests).
        shortlist: rerank each query's first-stage shortlist only (``None``: full ranking).
        split: the run's validation split (``None``: no parts are recorded).
        reference: the program every candidate is also compared with (a library program,
            run in-process once per task; ``None``: no reference).
        executor: where candidates run (default: in this process, with ``encoder``); P0 and
            the reference always run here.
        named: ``encoder`` by name, what the workers of an executor that runs work in other
            processes load (needed by such an executor only).

    Raises:
        ValueError: no tasks, or an executor of other processes without ``named``.

    """

    def __init__(
        self,
        tasks: Sequence[RetrievalTask],
        encoder: Encoder,
        *,
        lock: ComputeLock | None = None,
        shortlist: int | None = None,
        split: QuerySplit | None = None,
        reference: Program | None = None,
        executor: Executor | None = None,
        named: NamedEncoder | None = None,
    ) -> None:
        if not tasks:
            raise ValueError("the search needs at least one task")
        self.executor: Executor = executor or InProcessExecutor()
        if not self.executor.in_process and named is None:
            raise ValueError("an executor of other processes needs the encoder by name (named)")
        self.named = named
        self.tasks = tuple(tasks)
        self.encoder = encoder
        self.lock = lock
        self.shortlist = shortlist
        self.split = split
        self.reference = reference
        if split is not None:
            for task in self.tasks:
                split.of(task.name)  # every task must have its parts
        # The determinism check runs on the smallest task, first.
        self._order = sorted(
            range(len(self.tasks)),
            key=lambda i: (self.tasks[i].n_docs * self.tasks[i].n_queries, i),
        )
        # The same jobs for every candidate (Ray puts each job's task in its store once).
        self._jobs = [
            TaskJob(self.tasks[index], repeats=2 if rank == 0 else 1, shortlist=self.shortlist)
            for rank, index in enumerate(self._order)
        ]
        self._baselines: dict[str, TaskResult] = {}
        self._references: dict[str, TaskResult] = {}

    @property
    def task_names(self) -> tuple[str, ...]:
        """The tasks' names in suite order."""
        return tuple(t.name for t in self.tasks)

    @property
    def seen_task_names(self) -> tuple[str, ...]:
        """The tasks a proposer may know of: all but the split's validation tasks."""
        if self.split is None:
            return self.task_names
        return tuple(self.split.search_tasks)

    @property
    def views_collapsed(self) -> bool:
        """Whether the encoder realises every view name the same way (see ``EncoderInfo``)."""
        return self.encoder.info.collapsed

    def _run(self, program: Program, task: RetrievalTask) -> ProgramRun:
        return next(run_programs([program], task, self.encoder, shortlist=self.shortlist))

    def baseline(self, task: RetrievalTask) -> TaskResult:
        """P0 on ``task`` (computed once)."""
        if task.name not in self._baselines:
            self._baselines[task.name] = self._run(P0(), task).result
        return self._baselines[task.name]

    def reference_result(self, task: RetrievalTask) -> TaskResult | None:
        """The reference program on ``task`` (computed once; ``None`` without a reference)."""
        if self.reference is None:
            return None
        if task.name not in self._references:
            self._references[task.name] = self._run(self.reference, task).result
        return self._references[task.name]

    def baseline_per_task(self) -> dict[str, TaskDelta]:
        """P0's outcome on every task, in suite order: Δ 0 against itself, cost ratio 1."""
        return {task.name: self._task_delta(task, self.baseline(task)) for task in self.tasks}

    def reference_score(self) -> SuiteScore | None:
        """The reference program scored as a candidate would be (``None``: no reference).

        Against itself its Δ is 0 on every task and part; against P0 and in cost it is the
        reference's own. A peer search that starts from the reference reads these numbers
        for its starting program.
        """
        if self.reference is None:
            return None
        with self._locked():
            results = {}
            for task in self.tasks:
                result = self.reference_result(task)
                assert result is not None  # a reference is set
                results[task.name] = result
            return self._score(results)

    def _task_delta(self, task: RetrievalTask, result: TaskResult) -> TaskDelta:
        """``result`` against P0 and the reference, over all queries and each part."""
        base, reference = self.baseline(task), self.reference_result(task)
        parts: dict[Part, PartOutcome] = {}
        if self.split is not None:
            cut = self.split.of(task.name)
            for name in PARTS:
                queries = cut.part(name)
                if not queries:  # a validation task has no search part
                    continue
                parts[name] = PartOutcome(
                    p0=versus(result, base, queries),
                    reference=(
                        versus(result, reference, queries) if reference is not None else None
                    ),
                )
        whole = versus(result, base)
        return TaskDelta(
            comparison=whole.comparison,
            cost_ratio=result.cost.cost_ratio,
            index_calls=result.cost.index_calls,
            query_calls=result.cost.query_calls,
            query_time_cost_ratio=result.cost.query_time_cost_ratio,
            worst_query_delta=whole.worst_query_delta,
            reference=versus(result, reference) if reference is not None else None,
            parts=parts,
            algebra_seconds=result.timings.algebra_seconds,
            reference_algebra_seconds=(
                reference.timings.algebra_seconds if reference is not None else None
            ),
        )

    @contextmanager
    def _locked(self) -> Iterator[None]:
        if self.lock is None:
            yield
        else:
            with self.lock.held():
                yield

    def evaluate(self, program: Program) -> SuiteScore:
        """Run ``program`` once on every task and score it against P0.

        Raises:
            CandidateError: the program failed on some task (sandbox status, invalid
                output, or different outputs on two identical runs): the first failing run
                in the jobs' order, whichever executor ran it.
            EmbeddingTTCError: a job Ray could not run (not the candidate's failure).

        """
        jobs = self._jobs  # the smallest task twice (the determinism check), then the others
        computed = run_jobs(self.executor, program, jobs, self.encoder, self.named)
        with self._locked(), closing(computed) as outcomes:
            results: dict[str, TaskResult] = {}
            for job, runs in zip(jobs, outcomes, strict=True):
                if not _identical(runs):
                    raise CandidateError(
                        Status.REJECTED,
                        f"deterministic: two runs on {job.task.name} gave different scores",
                    )
                results[job.task.name] = runs[0].result
            return self._score(results)

    def _score(self, results: dict[str, TaskResult]) -> SuiteScore:
        per_task: dict[str, TaskDelta] = {}
        base_calls = program_calls = base_query = program_query = 0
        for task in self.tasks:
            result = results[task.name]
            per_task[task.name] = self._task_delta(task, result)
            base_calls += result.cost.base_calls
            program_calls += result.cost.program_calls
            base_query += result.cost.calls("base", "query")
            program_query += result.cost.calls("program", "query")
        deltas = [d.comparison.delta_ndcg_at_10 for d in per_task.values()]
        return SuiteScore(
            per_task=per_task,
            mean_delta=float(np.mean(deltas)),
            wtl=WTL.count(deltas),
            cost_ratio=(base_calls + program_calls) / base_calls if base_calls else 1.0,
            query_time_cost_ratio=(
                (base_query + program_query) / base_query if base_query else 1.0
            ),
        )


def versus(
    result: TaskResult, baseline: TaskResult, queries: Collection[str] | None = None
) -> Versus:
    """``result`` against ``baseline`` over ``queries`` (``None``: all), with its tail."""
    deltas = query_deltas(result, baseline, queries)
    return Versus(
        comparison=comparison_of(result, baseline, deltas, subset=queries is not None),
        worst_query_delta=min(deltas.values(), default=0.0),
        deep_losses=count_deep_losses(deltas.values()),
    )
