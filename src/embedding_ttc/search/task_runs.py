"""Running one candidate on one task: the evaluator's unit of work, wherever it runs.

A :class:`TaskJob` asks for a program's run(s) on one task; :func:`run_job` computes it with an
encoder and returns a :class:`TaskRun` per run, or raises the one failure type of a candidate,
:class:`~embedding_ttc.programs.outcome.CandidateError`, with the task named in its reason.

:func:`run_jobs` has a candidate's jobs computed by an :class:`~embedding_ttc.executors.Executor`
(``search --executor``), each by :func:`job_runs`, so a failure reads the same whichever ran it,
and reads the results in job order: the first failure in the evaluator's order decides the
outcome, whichever job finished first, and the jobs still running are then cancelled.

* In this process (``inprocess``, the default) the jobs run one after another with the
  command's encoder, lazily: a job runs when the evaluator asks for it, and none runs after
  the first failure.
* On Ray (``ray``, the ``ray`` extra) every job of a candidate is submitted at once, one Ray
  task each. A worker receives the sandboxed program (its source, name and limits) and loads
  its own encoder by name (:class:`~embedding_ttc.encoders.named.NamedEncoder`, once per
  worker process); tasks are put in Ray's object store once per run. The determinism
  check's two runs are one job, so they run in one process on one node, as in-process.

Records are the same under both executors but for timing fields. On a cluster, every node
needs the package, the encoder (an offline one, or its weights in the node's Hugging Face
cache) and the sandbox's permissions; tasks travel through the object store, so the data
folder is needed only where the command runs. A ``--cache-dir`` must be a path every node can
write (each node's own default cache otherwise). A failure that is not the candidate's (a
worker lost, an encoder that does not load) stops the search with an error; the generation
runs again on resume.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass

import numpy as np

from embedding_ttc.encoders.base import Encoder
from embedding_ttc.encoders.named import NamedEncoder, worker_encoder
from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.evaluation.evaluate import ProgramRun, run_programs
from embedding_ttc.evaluation.records import TaskResult
from embedding_ttc.executors import Executor, Lost
from embedding_ttc.program_files.sandbox.program import SandboxedProgram
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


@dataclass(frozen=True)
class _Failed:
    """A candidate's failure on a job: its ``CandidateError`` as plain values.

    A Ray task returns it rather than raising (an exception would reach the driver wrapped
    in Ray's, as a lost task, its reason lengthened by a traceback).
    """

    status: Status
    reason: str


def job_runs(
    job: TaskJob, program: Program, encoder: Encoder | NamedEncoder
) -> Iterator[tuple[TaskRun, ...] | _Failed]:
    """The work of one job, wherever it runs: the job's runs, or the candidate's failure.

    ``encoder`` is the loaded encoder in this process, or the encoder by name in a Ray
    worker (loaded once per worker process). A failure to load it is not the candidate's:
    it raises.
    """
    loaded = worker_encoder(encoder) if isinstance(encoder, NamedEncoder) else encoder
    try:
        runs = run_job(program, job, loaded)
    except CandidateError as exc:
        yield _Failed(exc.status, exc.reason)
        return
    yield runs


def run_jobs(
    executor: Executor,
    program: Program,
    jobs: Sequence[TaskJob],
    encoder: Encoder,
    named: NamedEncoder | None = None,
) -> Generator[tuple[TaskRun, ...], None, None]:
    """Each job's runs, in the order of ``jobs``; the first failure in that order raises.

    The caller reads the same outcome whether the jobs ran one after another or all at
    once. A caller that stops early closes the generator; the jobs still running are then
    cancelled (and waited for: a lock around the evaluation covers them).

    Args:
        executor: where the jobs run.
        program: the candidate (a sandboxed program, when the executor runs work in other
            processes: a worker runs it from its source, name and limits).
        jobs: the candidate's jobs.
        encoder: the encoder of this process (the in-process executor's).
        named: the same encoder by name (what workers of other processes load).

    Raises:
        CandidateError: the first job, in order, on which the candidate failed.
        EmbeddingTTCError: a job Ray could not run (a worker lost, an encoder that does not
            load there): not the candidate's failure.
        TypeError: a program that is not sandboxed, for work in other processes.
        ValueError: work in other processes without ``named``.

    """
    given: Encoder | NamedEncoder = encoder
    if not executor.in_process:
        if not isinstance(program, SandboxedProgram):
            raise TypeError(
                f"the Ray executor runs sandboxed programs (source, name, limits), "
                f"not {type(program).__name__}"
            )
        if named is None:
            raise ValueError("work in other processes needs the encoder by name (named)")
        given = named
    results = executor.map(job_runs, jobs, ordered=True, shared=(program, given))
    with closing(results):
        for job, outcome in results:
            if isinstance(outcome, Lost):
                raise EmbeddingTTCError(
                    f"Ray could not run {program.name} on {job.task.name}: {outcome.reason}"
                )
            if isinstance(outcome, _Failed):
                raise CandidateError(outcome.status, outcome.reason)
            yield outcome
