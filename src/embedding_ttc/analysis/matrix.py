"""The transfer matrix: plan the (encoder, task, program) cells, compute the missing ones.

Cells are computed in *groups*, one per (encoder, task): a single
:func:`~embedding_ttc.evaluation.evaluate.run_programs` call runs P0 and the group's missing
programs, so the base encoding of the corpus and the queries is done once and shared (and
served from the on-disk :class:`~embedding_ttc.encoders.cache.CachedEncoder` on later runs).
P0 always runs, as the baseline of every cell of its group; its own cell is stored only when
the plan asks for it.

A program that fails on a task (bad output, out of memory, a bug) becomes a
:class:`CellFailure`; its cell stays missing, so the next run retries it, and the group goes
on with the programs after it. An encoder or task that cannot be loaded is a user error and
ends the run.

Where groups run is an :class:`Executor`: :class:`InProcessExecutor` (default; one group after
another, the loaded encoder reused across its tasks) or :class:`RayExecutor` (one Ray task per
group, the ``ray`` extra). Both yield the same events, and the driver alone writes the store.

A large task can be scored in *shortlist mode* (:class:`ShortlistPolicy`): every query's
program, P0 included, reranks that query's ``K`` best dense first-stage candidates, as a
deployed second stage does, so time and memory grow with ``|Q|·K`` rather than ``|Q|·|D|``
(:mod:`embedding_ttc.evaluation.batches`). A cell records its ``shortlist`` and its program's
``version``; a stored cell made under another setting than the policy's for its task, or by
another version of its program than the installed one, is stale and is recomputed.

The learned-head baseline's cells (program ``LearnedHead``) are computed like any program's:
the environment's ``heads_root`` holds each encoder's trained head
(:mod:`embedding_ttc.analysis.heads`, trained before the matrix runs), and
:meth:`MatrixEnvironment.program` builds it as a program for that encoder's groups.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from embedding_ttc.analysis.cells import (
    BASELINE,
    BootstrapConfig,
    Cell,
    CellKey,
    CellStore,
    make_cell,
)
from embedding_ttc.analysis.head_store import HeadStore
from embedding_ttc.analysis.heads import LEARNED_HEAD, HeadStoreError
from embedding_ttc.encoders.base import Encoder
from embedding_ttc.errors import MissingExtraError, UnknownNameError
from embedding_ttc.evaluation.evaluate import run_programs
from embedding_ttc.evaluation.records import TaskResult
from embedding_ttc.programs.base import Program, program_version
from embedding_ttc.programs.catalog import get_program
from embedding_ttc.tasks.task import RetrievalTask, sample_queries

EXECUTORS: tuple[str, ...] = ("inprocess", "ray")


@dataclass(frozen=True)
class Plan:
    """An ordered set of cells (no duplicates); ``+`` is the ordered union."""

    keys: tuple[CellKey, ...]

    def __iter__(self) -> Iterator[CellKey]:
        return iter(self.keys)

    def __len__(self) -> int:
        return len(self.keys)

    def __add__(self, other: Plan) -> Plan:
        return Plan(tuple(dict.fromkeys((*self.keys, *other.keys))))


def plan(encoders: Sequence[str], tasks: Sequence[str], programs: Sequence[str]) -> Plan:
    """Every (encoder, task, program), encoder-major (one encoder loaded at a time)."""
    keys = [CellKey(e, t, p) for e in encoders for t in tasks for p in programs]
    return Plan(tuple(dict.fromkeys(keys)))


@dataclass(frozen=True)
class PerTaskSetting:
    """An optional positive integer per task: a default and per-task overrides.

    Attributes:
        default: the value of every task not named in ``per_task`` (``None``: not set).
        per_task: ``(task, value)`` pairs that override ``default``.

    """

    default: int | None = None
    per_task: tuple[tuple[str, int], ...] = ()

    option = "--setting"
    unit = "value"

    def __post_init__(self) -> None:
        for n in (self.default, *(n for _, n in self.per_task)):
            if n is not None and n < 1:
                raise ValueError(f"{self.option}: a {self.unit} is at least 1, got {n}")

    def value_for(self, task: str) -> int | None:
        """The value for ``task`` (``None``: not set for it)."""
        return dict(self.per_task).get(task, self.default)

    @classmethod
    def parse(cls, specs: Sequence[str]) -> Any:
        """``["100"]`` (every task) or ``["medquad=100", ...]`` (named tasks), or both.

        Raises:
            ValueError: on a malformed spec or a value below 1.

        """
        default: int | None = None
        per_task: dict[str, int] = {}
        for spec in specs:
            task, sep, value = spec.rpartition("=")
            if sep and not task:
                raise ValueError(f"{cls.option} {spec!r}: name the task before '='")
            try:
                n = int(value)
            except ValueError:
                raise ValueError(
                    f"{cls.option} {spec!r}: expected N or TASK=N with an integer N"
                ) from None
            if sep:
                per_task[task] = n
            else:
                default = n
        return cls(default, tuple(per_task.items()))

    def describe(self) -> dict[str, int | None]:
        """The setting as a JSON object for manifests: ``{"*": default, task: N, ...}``."""
        return {"*": self.default, **dict(self.per_task)}


@dataclass(frozen=True)
class ShortlistPolicy(PerTaskSetting):
    """Which tasks are scored over a dense first stage's shortlist, and how long it is."""

    option = "--shortlist"
    unit = "shortlist length"

    def k_for(self, task: str) -> int | None:
        """The shortlist length for ``task`` (``None``: score the whole corpus)."""
        return self.value_for(task)


@dataclass(frozen=True)
class QuerySample(PerTaskSetting):
    """Which tasks are scored on a seeded sample of their queries, and how many.

    The sample of a task depends on its name and size only (:func:`sample_queries`), so every
    encoder, program and run of the matrix scores the same queries.
    """

    option = "--sample-queries"
    unit = "sample size"

    def n_for(self, task: str) -> int | None:
        """The number of queries sampled from ``task`` (``None``: every query)."""
        return self.value_for(task)


@dataclass(frozen=True)
class GroupJob:
    """The missing cells of one (encoder, task): run P0 and ``programs`` together."""

    encoder: str
    task: str
    programs: tuple[str, ...]
    bootstrap: BootstrapConfig
    shortlist: int | None = None
    queries: int | None = None

    def cell_keys(self) -> list[CellKey]:
        """The cells this job produces."""
        return [CellKey(self.encoder, self.task, p) for p in self.programs]


def group_jobs(
    keys: Iterable[CellKey],
    bootstrap: BootstrapConfig,
    shortlist: ShortlistPolicy | None = None,
    sample: QuerySample | None = None,
) -> list[GroupJob]:
    """Group cells by (encoder, task), in order of first appearance."""
    policy = shortlist or ShortlistPolicy()
    sample = sample or QuerySample()
    groups: dict[tuple[str, str], list[str]] = {}
    for k in keys:
        groups.setdefault((k.encoder, k.task), []).append(k.program)
    return [
        GroupJob(e, t, tuple(ps), bootstrap, policy.k_for(t), sample.n_for(t))
        for (e, t), ps in groups.items()
    ]


@dataclass(frozen=True)
class MatrixEnvironment:
    """How a worker obtains encoders and tasks (plain values, so Ray can ship it to workers).

    Attributes:
        data_root: folder of task folders (``None``: the default data root).
        cache_dir: embedding cache (``None``: the default cache directory).
        backend: encoder runtime (``torch`` or ``onnx-int8``).
        use_cache: wrap encoders in the on-disk :class:`CachedEncoder`.
        heads_root: the matrix directory whose ``heads/`` holds the trained learned heads
            (:class:`~embedding_ttc.analysis.heads.HeadStore`); needed only by ``LearnedHead``
            cells.

    """

    data_root: Path | None = None
    cache_dir: Path | None = None
    backend: str = "torch"
    use_cache: bool = True
    heads_root: Path | None = None

    def encoder(self, name: str) -> Encoder:
        """Load encoder ``name``, wrapped in the on-disk cache."""
        from embedding_ttc.encoders.cache import CachedEncoder
        from embedding_ttc.encoders.catalog import load_encoder

        encoder = load_encoder(name, self.backend)
        return CachedEncoder(encoder, self.cache_dir) if self.use_cache else encoder

    def task(self, name: str) -> RetrievalTask:
        """Load task ``name``."""
        from embedding_ttc.tasks.catalog import load_task

        return load_task(name, self.data_root)

    def program(self, name: str, encoder: str) -> Program:
        """Build program ``name`` for ``encoder``'s cells (``LearnedHead``: its trained head)."""
        if name != LEARNED_HEAD:
            return get_program(name)
        if self.heads_root is None:
            raise HeadStoreError(
                f"{LEARNED_HEAD} is trained per encoder: give the matrix environment a "
                "heads_root (`embedding-ttc transfer --heads` does)"
            )
        return HeadStore(self.heads_root).program(encoder)


@dataclass(frozen=True)
class GroupStarted:
    """A group is about to be computed (in-process executor only)."""

    job: GroupJob
    n_texts: int


@dataclass(frozen=True)
class CellFailure:
    """A cell that could not be computed this time; it stays missing."""

    key: CellKey
    reason: str


Event = GroupStarted | Cell | CellFailure


def compute_group(
    job: GroupJob,
    encoder: Encoder,
    task: RetrievalTask,
    resolve: Callable[[str], Program] | None = None,
) -> Iterator[Event]:
    """Run P0 and the job's programs on ``task``; yield each cell (or failure) as it exists.

    ``resolve`` builds a program from its name (default: the program registry).
    """
    build = resolve or get_program
    if job.queries is not None:
        task = sample_queries(task, job.queries)
    cell = partial(make_cell, job.encoder, config=job.bootstrap, query_sample=job.queries)
    remaining = [p for p in job.programs if p != BASELINE]
    want_p0 = BASELINE in job.programs
    baseline: TaskResult | None = None
    while True:
        names = list(remaining)
        runs = run_programs(
            [build(n) for n in (BASELINE, *names)], task, encoder, shortlist=job.shortlist
        )
        finished = 0
        started = False
        try:
            for run in runs:
                if not started:  # P0 comes first in every call
                    started = True
                    if baseline is None:
                        baseline = run.result
                        if want_p0:
                            yield cell(baseline, baseline)
                    continue
                if baseline is None:  # unreachable: P0 ran first
                    raise RuntimeError("P0 did not run before the programs")
                yield cell(run.result, baseline)
                finished += 1
            return
        except Exception as exc:  # one failing program must not end a long matrix
            reason = f"{type(exc).__name__}: {exc}"
            if not started:  # the base encoding or P0 failed: nothing to compare with
                lost = names if baseline is not None else list(job.programs)
                for name in lost:
                    yield CellFailure(CellKey(job.encoder, job.task, name), reason)
                return
            yield CellFailure(CellKey(job.encoder, job.task, names[finished]), reason)
            remaining = names[finished + 1 :]
            if not remaining:
                return


class Executor(Protocol):
    """Where groups run: yields every group's events, in any order of groups."""

    def run(self, jobs: Sequence[GroupJob], env: MatrixEnvironment) -> Iterator[Event]:
        """Compute ``jobs`` and yield their events."""
        ...


class InProcessExecutor:
    """Groups one after another in this process; an encoder is loaded once per run of groups."""

    def run(self, jobs: Sequence[GroupJob], env: MatrixEnvironment) -> Iterator[Event]:
        """Compute ``jobs`` in order."""
        loaded: tuple[str, Encoder] | None = None
        for job in jobs:
            task = env.task(job.task)
            yield GroupStarted(job, task.n_docs + task.n_queries)
            if loaded is None or loaded[0] != job.encoder:
                loaded = None  # drop the previous model before loading the next
                loaded = (job.encoder, env.encoder(job.encoder))
            yield from compute_group(
                job, loaded[1], task, partial(env.program, encoder=job.encoder)
            )


def _ray_group(job: GroupJob, env: MatrixEnvironment) -> list[Event]:
    """The body of one Ray task (module level, so workers import it by reference)."""
    resolve = partial(env.program, encoder=job.encoder)
    return list(compute_group(job, env.encoder(job.encoder), env.task(job.task), resolve))


def import_ray() -> Any:
    """Import Ray, or raise :class:`MissingExtraError` naming the ``ray`` extra."""
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise MissingExtraError("ray", "ray", "the Ray executor of the transfer matrix") from None


@dataclass
class RayExecutor:
    """One Ray task per group, on a running cluster or on a local Ray started for the run.

    Args:
        address: a cluster to join (``ray.init(address=...)``); ``None`` starts a local Ray
            unless one is already initialised.
        num_cpus: CPUs of a local Ray started here.
        cpus_per_group: CPUs each group's task reserves.
        init_options: further keyword arguments of ``ray.init`` (``include_dashboard`` is
            ``False`` unless given).

    A Ray started here is shut down when the run ends; one already initialised is left alone.
    Workers load their own encoder per group and read and write the same on-disk embedding
    cache (entries are written atomically, so concurrent workers are safe).

    """

    address: str | None = None
    num_cpus: int | None = None
    cpus_per_group: float = 1.0
    init_options: dict[str, Any] = field(default_factory=dict)

    def run(self, jobs: Sequence[GroupJob], env: MatrixEnvironment) -> Iterator[Event]:
        """Submit every group, then yield each group's events as it finishes."""
        ray = import_ray()
        if not jobs:
            return
        owns = not ray.is_initialized()
        if owns:
            options = {"include_dashboard": False, **self.init_options}
            ray.init(address=self.address, num_cpus=self.num_cpus, **options)
        try:
            remote = ray.remote(num_cpus=self.cpus_per_group)(_ray_group)
            pending = {remote.remote(job, env): job for job in jobs}
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                job = pending.pop(ready[0])
                try:
                    events: list[Event] = ray.get(ready[0])
                except Exception as exc:  # the worker died or could not load the encoder
                    events = [
                        CellFailure(k, f"{type(exc).__name__}: {exc}") for k in job.cell_keys()
                    ]
                yield from events
        finally:
            if owns:
                ray.shutdown()


def make_executor(name: str, *, address: str | None = None) -> Executor:
    """The executor called ``name`` (``inprocess`` or ``ray``; ``address``: a Ray cluster).

    Without ``address`` Ray reads ``RAY_ADDRESS``, else starts a local Ray for the run.
    """
    if name == "inprocess":
        return InProcessExecutor()
    if name == "ray":
        import_ray()
        return RayExecutor(address=address)
    raise UnknownNameError(f"unknown executor {name!r}; executors: {', '.join(EXECUTORS)}")


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


def current_version(name: str) -> int:
    """The ``version`` of registered program ``name`` as installed (``LearnedHead``: 1)."""
    if name == LEARNED_HEAD:
        return 1
    return program_version(get_program(name))


def to_compute(
    plan: Plan,
    store: CellStore,
    shortlist: ShortlistPolicy,
    version: Callable[[str], int] = current_version,
    sample: QuerySample | None = None,
) -> tuple[list[CellKey], list[CellKey]]:
    """The cells of ``plan`` that a run computes: those absent, and those stale.

    A stored cell is stale when it was computed under another shortlist than ``shortlist``
    gives for its task, on another query sample than ``sample`` gives, or by another version
    of its program than ``version(name)`` (the installed one by default).
    """
    sample = sample or QuerySample()
    absent = store.missing(plan)
    gone = set(absent)
    present = list(store.present(k for k in plan if k not in gone))
    versions = {name: version(name) for name in {c.program for c in present}}
    stale = [
        c.key
        for c in present
        if c.shortlist != shortlist.k_for(c.task)
        or c.query_sample != sample.n_for(c.task)
        or c.program_version != versions[c.program]
    ]
    return absent, stale


def restat_existing(
    keys: Iterable[CellKey], store: CellStore, bootstrap: BootstrapConfig
) -> list[CellKey]:
    """Recompute the bootstrap of stored cells made with another configuration (no encoding)."""
    out = []
    for cell in store.present(keys):
        if not cell.bootstrap.matches(bootstrap):
            store.write(cell.restat(bootstrap))
            out.append(cell.key)
    return out


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
        executor: where groups run (default :class:`InProcessExecutor`).
        progress: called after every event with the running count.
        env: how encoders and tasks are obtained (default :class:`MatrixEnvironment`).
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
    absent, stale = to_compute(plan, store, policy, sample=sample)
    wanted = set(absent) | set(stale)
    missing = [k for k in plan if k in wanted]
    restatted = restat_existing([k for k in plan if k not in wanted], store, bootstrap)
    computed: list[CellKey] = []
    failed: list[CellFailure] = []
    for event in executor.run(group_jobs(missing, bootstrap, policy, sample), env):
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
