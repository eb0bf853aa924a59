"""Where work runs: in this process, or as Ray tasks; and Ray for one run.

An :class:`Executor` maps a piece of work over jobs: ``work(job, *shared)`` returns the job's
outputs, and the executor yields each as ``(job, output)``. Everything that spreads work over
processes goes through it: the transfer matrix's groups of cells
(:func:`~embedding_ttc.analysis.groups.run_groups`), a search candidate's task runs
(:func:`~embedding_ttc.search.task_runs.run_jobs`) and a build's encoder shards
(:class:`~embedding_ttc.encoders.sharded.ShardedEncoder`). Two executors, named from
:data:`EXECUTORS` (``--executor``) and opened by :func:`open_executor`:

* :class:`InProcessExecutor` (``inprocess``): job after job in this process, each output
  yielded as ``work`` produces it, so a job runs only when the caller asks for its outputs
  (lazily) and an exception of ``work`` reaches the caller as it is.
* :class:`RayExecutor` (``ray``, the ``ray`` extra): one Ray task per job, every job
  submitted at once; each job's outputs come back together, in job order (``ordered``) or as
  jobs finish. Jobs and shared values are put in Ray's object store once and passed by
  reference; a value the next map uses again (the search's tasks, candidate after candidate)
  is not put again. A task that fails (a worker lost, an exception raised by ``work`` in it)
  is a :class:`Lost` output, so the caller decides: the matrix records its cells as failed
  and goes on, the search stops. When the caller stops reading, or an exception passes
  through, the jobs still running are cancelled and waited for.

Work that may fail on a job's account reports it as an output (a cell's failure, a
candidate's): an exception would reach the caller as the work's own in process and as a
:class:`Lost` under Ray. Ray is held for a run by :func:`ray_session`, which leaves a Ray the
caller initialised alone.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, TypeVar

from embedding_ttc.errors import MissingExtraError, UnknownNameError
from embedding_ttc.registry import closest

EXECUTORS: tuple[str, ...] = ("inprocess", "ray")
"""``inprocess``: in the command's own process; ``ray``: as Ray tasks."""

Job = TypeVar("Job")
Out = TypeVar("Out")


@dataclass(frozen=True)
class Lost:
    """A job Ray could not run to its end (a worker lost, an exception in the task).

    Attributes:
        reason: the failure's type and message (the task's exception, not Ray's wrapper).

    """

    reason: str


class Executor(Protocol):
    """Maps work over jobs: yields ``(job, output)`` for every output of every job."""

    @property
    def in_process(self) -> bool:
        """Whether work runs in this process.

        In this process a job's arguments need not travel (a loaded encoder may be passed)
        and its outputs arrive as the work produces them.
        """
        ...

    def map(
        self,
        work: Callable[..., Iterable[Out]],
        jobs: Sequence[Job],
        *,
        ordered: bool,
        shared: Sequence[object] = (),
    ) -> Generator[tuple[Job, Out | Lost], None, None]:
        """Run ``work(job, *shared)`` for every job; yield each output with its job.

        A caller that stops reading closes the generator (``contextlib.closing``): the work
        still running is stopped or cancelled.

        Args:
            work: a module-level function (a Ray worker imports it by reference) returning
                the job's outputs.
            jobs: the jobs.
            ordered: yield the jobs in their order (else as they finish).
            shared: further arguments of every call (passed once, by reference, to Ray).

        """
        ...


def check_executor(name: str) -> str:
    """``name`` if it is one of :data:`EXECUTORS`, else :class:`UnknownNameError` with hints."""
    if name in EXECUTORS:
        return name
    near = closest(name, list(EXECUTORS))
    hint = f" Did you mean: {', '.join(near)}?" if near else ""
    raise UnknownNameError(f"unknown executor {name!r}.{hint} Known: {', '.join(EXECUTORS)}")


def import_ray(purpose: str) -> Any:
    """Import Ray, or raise :class:`MissingExtraError` naming the ``ray`` extra and ``purpose``."""
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise MissingExtraError("ray", "ray", purpose) from None


@contextmanager
def ray_session(
    purpose: str,
    *,
    address: str | None = None,
    num_cpus: int | None = None,
    init_options: Mapping[str, Any] | None = None,
) -> Iterator[Any]:
    """Ray, initialised for the block: the ``ray`` module.

    A Ray initialised here is shut down when the block ends; one already initialised (by the
    caller, a notebook, a test) is used and left alone.

    Args:
        purpose: what needs Ray (in the install hint when it is missing).
        address: a cluster to join (``ray.init(address=...)``); ``None``: ``RAY_ADDRESS``
            if set, else a local Ray started here.
        num_cpus: CPUs of a local Ray started here (``None``: every CPU of the machine).
        init_options: further keyword arguments of ``ray.init`` (``include_dashboard`` is
            ``False`` unless given).

    """
    ray = import_ray(purpose)
    owns = not ray.is_initialized()
    if owns:
        options = {"include_dashboard": False, **(init_options or {})}
        ray.init(address=address, num_cpus=num_cpus, **options)
    try:
        yield ray
    finally:
        if owns:
            ray.shutdown()


class InProcessExecutor:
    """Job after job in this process, each output yielded as the work produces it."""

    in_process: ClassVar[bool] = True

    def map(
        self,
        work: Callable[..., Iterable[Out]],
        jobs: Sequence[Job],
        *,
        ordered: bool,
        shared: Sequence[object] = (),
    ) -> Generator[tuple[Job, Out | Lost], None, None]:
        """Run ``work(job, *shared)`` job after job, lazily (in order, whatever ``ordered``).

        A caller that stops reading closes the job's outputs (a generator's ``finally`` runs).
        """
        for job in jobs:
            outputs = iter(work(job, *shared))
            try:
                for output in outputs:
                    yield job, output
            finally:
                close = getattr(outputs, "close", None)
                if close is not None:
                    close()


def _outputs(work: Callable[..., Iterable[Any]], job: Any, *shared: Any) -> list[Any]:
    """The body of every Ray task: the job's outputs, as a list (a generator cannot travel)."""
    return list(work(job, *shared))


def _reason(exc: BaseException) -> str:
    """A Ray failure as its cause's type and message (a task's exception, unwrapped)."""
    cause = getattr(exc, "cause", None) or exc
    return f"{type(cause).__name__}: {cause}"


class _Session:
    """What a :class:`RayExecutor` holds between maps: Ray, its task body, the objects put."""

    def __init__(self, executor: RayExecutor) -> None:
        self.executor = executor
        self.stack = ExitStack()
        self.ray: Any = None
        self.remote: Any = None
        self.kept: dict[int, tuple[object, Any]] = {}  # id -> (the value, its object ref)

    def start(self) -> Any:
        """Ray, joined or started at the first call (and held until :meth:`close`)."""
        if self.ray is None:
            ex = self.executor
            self.ray = self.stack.enter_context(
                ray_session(
                    ex.purpose,
                    address=ex.address,
                    num_cpus=ex.num_cpus,
                    init_options=ex.init_options,
                )
            )
            self.remote = self.ray.remote(num_cpus=ex.cpus_per_job)(_outputs)
        return self.ray

    def share(self, values: Sequence[object]) -> list[Any]:
        """An object ref for each value: put once, the previous map's refs reused.

        Values are told apart by identity (and held, so an identity is not reused while its
        ref is kept); the refs of the previous map that this one does not use are released.
        """
        used: dict[int, tuple[object, Any]] = {}
        for value in values:
            key = id(value)
            if key not in used:
                used[key] = self.kept.get(key) or (value, self.ray.put(value))
        self.kept = used
        return [used[id(value)][1] for value in values]

    def close(self) -> None:
        self.kept = {}
        self.stack.close()


@dataclass
class RayExecutor:
    """One Ray task per job, on a running cluster or on a local Ray started for the run.

    Outside :meth:`open`, each map holds Ray for itself; inside, Ray and the objects put are
    kept from the first map with jobs to the end of the block. A Ray started here is shut
    down then; one already initialised is left alone (:func:`ray_session`).

    Args:
        address: a cluster to join (``ray.init(address=...)``); ``None``: ``RAY_ADDRESS`` if
            set, else a local Ray, unless one is already initialised.
        num_cpus: CPUs of a local Ray started here (``None``: every CPU of the machine).
        cpus_per_job: CPUs each job's task reserves.
        init_options: further keyword arguments of ``ray.init`` (``include_dashboard`` is
            ``False`` unless given).
        purpose: what needs Ray (in the install hint when it is missing).

    """

    address: str | None = None
    num_cpus: int | None = None
    cpus_per_job: float = 1.0
    init_options: Mapping[str, Any] = field(default_factory=dict)
    purpose: str = "--executor ray"
    in_process: ClassVar[bool] = False
    _session: _Session | None = field(default=None, init=False, repr=False, compare=False)

    @contextmanager
    def open(self) -> Iterator[RayExecutor]:
        """Keep Ray, and the objects put in its store, between the maps of the block.

        Raises:
            MissingExtraError: Ray is not installed (the ``ray`` extra).

        """
        import_ray(self.purpose)
        with self._held():
            yield self

    @contextmanager
    def _held(self) -> Iterator[_Session]:
        """The session of the enclosing :meth:`open` block, else one for this block."""
        if self._session is not None:
            yield self._session
            return
        self._session = session = _Session(self)
        try:
            yield session
        finally:
            self._session = None
            session.close()

    def map(
        self,
        work: Callable[..., Iterable[Out]],
        jobs: Sequence[Job],
        *,
        ordered: bool,
        shared: Sequence[object] = (),
    ) -> Generator[tuple[Job, Out | Lost], None, None]:
        """Submit every job, then yield each job's outputs in job order or as jobs finish.

        A job whose task failed yields one :class:`Lost`. Jobs still running when the caller
        stops reading (or an exception passes through) are cancelled and waited for.
        """
        if not jobs:
            return
        with self._held() as session:
            yield from self._map(session, work, jobs, ordered, shared)

    def _map(
        self,
        session: _Session,
        work: Callable[..., Iterable[Out]],
        jobs: Sequence[Job],
        ordered: bool,
        shared: Sequence[object],
    ) -> Generator[tuple[Job, Out | Lost], None, None]:
        ray = session.start()
        refs = session.share([*jobs, *shared])
        args = refs[len(jobs) :]
        pending: dict[Any, Job] = {}  # object ref -> its job, in the jobs' order
        try:
            for ref, job in zip(refs[: len(jobs)], jobs, strict=True):
                pending[session.remote.remote(work, ref, *args)] = job
            while pending:
                if ordered:
                    done = next(iter(pending))
                else:
                    done = ray.wait(list(pending), num_returns=1)[0][0]
                try:
                    outputs: list[Out | Lost] = ray.get(done)
                except ray.exceptions.RayError as exc:  # not the work's report: Ray's
                    outputs = [Lost(_reason(exc))]
                job = pending.pop(done)
                for output in outputs:
                    yield job, output
        finally:
            _cancel(ray, list(pending))


def _cancel(ray: Any, refs: list[Any]) -> None:
    """Cancel tasks no one will read, and wait until they stopped (a lock may cover them)."""
    if not refs:
        return
    for ref in refs:
        ray.cancel(ref)
    ray.wait(refs, num_returns=len(refs))


@contextmanager
def open_executor(
    name: str,
    *,
    address: str | None = None,
    num_cpus: int | None = None,
    init_options: Mapping[str, Any] | None = None,
    purpose: str = "--executor ray",
) -> Iterator[Executor]:
    """The executor called ``name`` (one of :data:`EXECUTORS`), for the block.

    Ray is joined or started at the first map with jobs (a run with nothing to compute starts
    none) and held until the block ends.

    Args:
        name: ``inprocess`` or ``ray``.
        address: the Ray cluster (``None``: ``RAY_ADDRESS``, else a local Ray for the block).
        num_cpus: CPUs of a local Ray started here (``None``: all).
        init_options: further ``ray.init`` keyword arguments.
        purpose: what needs Ray (in the install hint when it is missing).

    Raises:
        UnknownNameError: ``name`` is not a known executor (the closest are suggested).
        MissingExtraError: ``ray`` without the ``ray`` extra installed.

    """
    if check_executor(name) == "inprocess":
        yield InProcessExecutor()
        return
    executor = RayExecutor(
        address=address, num_cpus=num_cpus, init_options=dict(init_options or {}), purpose=purpose
    )
    with executor.open():
        yield executor
