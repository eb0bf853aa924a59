"""Running one candidate on one task: the evaluator's unit of work, wherever it runs.

A :class:`TaskJob` asks for a program's run(s) on one task; :func:`run_job` computes it with an
encoder and returns a :class:`TaskRun` per run, or raises the one failure type of a candidate,
:class:`~embedding_ttc.programs.outcome.CandidateError`, with the task named in its reason.
:class:`TaskExecutor` is the seam through which
:class:`~embedding_ttc.search.evaluator.SuiteEvaluator` has its jobs computed (in this process
or as Ray tasks: :mod:`~embedding_ttc.search.executors`); every executor computes a job with
:func:`run_job`, so a failure reads the same whichever ran it.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from embedding_ttc.encoders.base import Encoder
from embedding_ttc.evaluation.evaluate import ProgramRun, run_programs
from embedding_ttc.evaluation.records import TaskResult
from embedding_ttc.programs.base import Program
from embedding_ttc.programs.outcome import CandidateError, Status
from embedding_ttc.programs.output import ProgramOutputError
from embedding_ttc.tasks.task import RetrievalTask


@dataclass(frozen=True)
class TaskJob:
    """Run a program ``repeats`` times on ``task`` (2: for the determinism check).

    Attributes:
        task: the task.
        repeats: how many identical runs, one after another in the same process.
        shortlist: rerank each query's first-stage shortlist only (``None``: full ranking).

    """

    task: RetrievalTask
    repeats: int = 1
    shortlist: int | None = None

    def __post_init__(self) -> None:
        if self.repeats < 1:
            raise ValueError(f"a job runs at least once, got repeats={self.repeats}")


@dataclass(frozen=True)
class TaskRun:
    """One run's result, and its scores when the job repeats.

    ``scores[i]`` is query ``i``'s score row (the values of
    :attr:`~embedding_ttc.evaluation.evaluate.ProgramRun.rows`). Only the determinism check
    reads them, so a job that runs once keeps none: a Ray worker then sends back a result,
    not a task's whole score matrix.
    """

    result: TaskResult
    scores: tuple[np.ndarray, ...] = ()


def run_once(
    program: Program, task: RetrievalTask, encoder: Encoder, shortlist: int | None = None
) -> ProgramRun:
    """One run of ``program`` on ``task``; any failure is a ``CandidateError`` naming the task.

    A sandbox failure keeps its status; invalid output is ``invalid_output``; any other
    exception (the program's, or the encoder's while serving it) is ``crashed``.
    """
    try:
        return next(run_programs([program], task, encoder, shortlist=shortlist))
    except ProgramOutputError as exc:
        raise CandidateError(Status.INVALID_OUTPUT, f"{task.name}: {exc}") from exc
    except CandidateError as exc:  # the sandbox's status, with the task named
        raise CandidateError(exc.status, f"{task.name}: {exc.reason}") from exc
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}"
        raise CandidateError(Status.CRASHED, f"{task.name}: {reason}") from exc


def run_job(program: Program, job: TaskJob, encoder: Encoder) -> tuple[TaskRun, ...]:
    """The job's runs, in order; the first failing run raises (later runs do not happen)."""
    runs = []
    for _ in range(job.repeats):
        run = run_once(program, job.task, encoder, job.shortlist)
        scores = tuple(values for _, values in run.rows) if job.repeats > 1 else ()
        runs.append(TaskRun(run.result, scores))
    return tuple(runs)


class TaskExecutor(Protocol):
    """Computes a candidate's jobs (the evaluator calls it once per candidate).

    An executor yields each job's runs in the order of ``jobs``, and raises the
    ``CandidateError`` of the first job, in that order, that failed: the caller then reads the
    same outcome whether the jobs ran one after another or all at once. A caller that stops
    early closes the generator; an executor then stops or cancels the jobs still running.
    """

    def run(
        self, program: Program, jobs: Sequence[TaskJob]
    ) -> Generator[tuple[TaskRun, ...], None, None]:
        """Yield each job's runs in order; raise the first failure in that order."""
        ...
