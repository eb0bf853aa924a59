"""Where a candidate's task runs happen: in this process, or as Ray tasks.

Two :class:`~embedding_ttc.search.task_runs.TaskExecutor` s, named by ``search --executor``:

* :class:`InProcessTaskExecutor` (``inprocess``, the default): one job after another with the
  command's encoder, stopping at the first failure.
* :class:`RayTaskExecutor` (``ray``, the ``ray`` extra): every job of a candidate is submitted
  at once, one Ray task each. A worker rebuilds the sandboxed program from its source, name and
  limits, and loads its own encoder by name (:class:`~embedding_ttc.encoders.named.NamedEncoder`,
  once per worker process); tasks are put in Ray's object store once per run. The driver takes
  the results in job order, so the first failure in the evaluator's order decides the outcome
  whichever task finished first, and it cancels the jobs still running once one has failed.

The evaluator around an executor keeps the rest: the determinism check, P0 and the reference,
the scoring and the compute lock (:mod:`~embedding_ttc.search.evaluator`). Records are the
same under both executors but for timing fields. The determinism check's two runs are one Ray
task, so they run in one process on one node, as in-process.

On a cluster, every node needs the package, the encoder (an offline one, or its weights in
the node's Hugging Face cache) and the sandbox's permissions; tasks travel through the object
store, so the data folder is needed only where the command runs. A ``--cache-dir`` must be a
path every node can write (each node's own default cache otherwise). A failure that is not the
candidate's (a worker lost, an encoder that does not load) stops the search with an error; the
generation runs again on resume.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from embedding_ttc.encoders.base import Encoder
from embedding_ttc.encoders.named import NamedEncoder, worker_encoder
from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.executors import check_executor, ray_session
from embedding_ttc.program_files.sandbox.limits import SandboxLimits
from embedding_ttc.program_files.sandbox.program import SandboxedProgram
from embedding_ttc.programs.base import Program
from embedding_ttc.programs.outcome import CandidateError, Status
from embedding_ttc.search.task_runs import TaskExecutor, TaskJob, TaskRun, run_job
from embedding_ttc.tasks.task import RetrievalTask

PURPOSE = "search --executor ray"


class InProcessTaskExecutor:
    """Jobs one after another in this process, with one encoder; stops at the first failure."""

    def __init__(self, encoder: Encoder) -> None:
        self.encoder = encoder

    def run(
        self, program: Program, jobs: Sequence[TaskJob]
    ) -> Generator[tuple[TaskRun, ...], None, None]:
        """Compute ``jobs`` in order (lazily: a job runs when the caller asks for it)."""
        for job in jobs:
            yield run_job(program, job, self.encoder)


@dataclass(frozen=True)
class _Failed:
    """A candidate's failure on a Ray task: its ``CandidateError`` as plain values."""

    status: Status
    reason: str


def _ray_job(
    source: str,
    name: str,
    limits: SandboxLimits,
    task: RetrievalTask,
    repeats: int,
    shortlist: int | None,
    encoder: NamedEncoder,
) -> tuple[TaskRun, ...] | _Failed:
    """The body of one Ray task: the job's runs, or the candidate's failure.

    A candidate's failure comes back as a value (an exception would reach the driver wrapped
    in Ray's, its reason lengthened by a traceback). A failure to load the encoder is not the
    candidate's: it raises, and the driver stops the search.
    """
    program = SandboxedProgram(source, name, limits)
    loaded = worker_encoder(encoder)
    try:
        return run_job(program, TaskJob(task, repeats, shortlist), loaded)
    except CandidateError as exc:
        return _Failed(exc.status, exc.reason)


class RayTaskExecutor:
    """One Ray task per job, all of a candidate's submitted at once, on an initialised Ray.

    Only sandboxed programs are run (the worker rebuilds one from its source, name and limits).

    Args:
        ray: the ``ray`` module, initialised (:func:`~embedding_ttc.executors.ray_session`).
        encoder: the encoder each worker loads.
        cpus_per_job: CPUs each job's task reserves (its worker and the sandbox's child
            take turns: the worker serves encodes while the child waits).

    """

    def __init__(self, ray: Any, encoder: NamedEncoder, cpus_per_job: float = 1.0) -> None:
        self.ray = ray
        self.encoder = encoder
        self._remote = ray.remote(num_cpus=cpus_per_job)(_ray_job)
        self._tasks: dict[str, Any] = {}  # task name -> its object ref, put once per run

    def _task_ref(self, task: RetrievalTask) -> Any:
        if task.name not in self._tasks:
            self._tasks[task.name] = self.ray.put(task)
        return self._tasks[task.name]

    def run(
        self, program: Program, jobs: Sequence[TaskJob]
    ) -> Generator[tuple[TaskRun, ...], None, None]:
        """Submit every job, then yield each job's runs in job order."""
        if not isinstance(program, SandboxedProgram):
            raise TypeError(
                f"the Ray executor runs sandboxed programs (source, name, limits), "
                f"not {type(program).__name__}"
            )
        refs = [
            self._remote.remote(
                program.source,
                program.name,
                program.limits,
                self._task_ref(job.task),
                job.repeats,
                job.shortlist,
                self.encoder,
            )
            for job in jobs
        ]
        pending = list(refs)
        try:
            for job, ref in zip(jobs, refs, strict=True):
                outcome = self._get(ref, job, program.name)
                pending.remove(ref)
                if isinstance(outcome, _Failed):
                    raise CandidateError(outcome.status, outcome.reason)
                yield outcome
        finally:
            self._cancel(pending)

    def _get(self, ref: Any, job: TaskJob, name: str) -> Any:
        try:
            return self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:  # not the candidate's failure
            cause = getattr(exc, "cause", None) or exc
            raise EmbeddingTTCError(
                f"Ray could not run {name} on {job.task.name}: {type(cause).__name__}: {cause}"
            ) from exc

    def _cancel(self, refs: list[Any]) -> None:
        """Cancel jobs no one will read, and wait until they stopped (the lock covers them)."""
        if not refs:
            return
        for ref in refs:
            self.ray.cancel(ref)
        self.ray.wait(refs, num_returns=len(refs))


@contextmanager
def open_executor(
    executor: str,
    encoder: Encoder,
    named: NamedEncoder,
    *,
    address: str | None = None,
    num_cpus: int | None = None,
    init_options: dict[str, Any] | None = None,
) -> Iterator[TaskExecutor]:
    """The task executor called ``executor`` (``inprocess`` or ``ray``), for the block.

    Args:
        executor: one of :data:`~embedding_ttc.executors.EXECUTORS`.
        encoder: the command's encoder (the in-process executor's).
        named: the same encoder by name (what Ray workers load).
        address: the Ray cluster (``None``: ``RAY_ADDRESS``, else a local Ray for the block).
        num_cpus: CPUs of a local Ray started here (``None``: all).
        init_options: further ``ray.init`` keyword arguments.

    Raises:
        UnknownNameError: ``executor`` is not a known name (the closest are suggested).
        MissingExtraError: ``ray`` without the ``ray`` extra installed.

    """
    if check_executor(executor) == "inprocess":
        yield InProcessTaskExecutor(encoder)
        return
    with ray_session(PURPOSE, address=address, num_cpus=num_cpus, init_options=init_options) as ray:
        yield RayTaskExecutor(ray, named)
