"""One group of cells: P0 and the missing programs of one (encoder, task), computed together.

A single :func:`~embedding_ttc.evaluation.evaluate.run_programs` call runs P0 and the group's
programs, so the base encoding of the corpus and the queries is done once and shared (and
served from the on-disk :class:`~embedding_ttc.encoders.cache.CachedEncoder` on later runs).
P0 always runs, as the baseline of every cell of its group; its own cell is produced only when
the group asks for it.

A program that fails on a task (bad output, out of memory, a bug; for a program file, any
failure of the sandbox) becomes a :class:`CellFailure` with its status and reason; its cell
stays missing, so the next run retries it, and the group goes on with the programs after it.

Workers obtain encoders, tasks and programs from a :class:`MatrixEnvironment` of plain
values. The learned-head baseline's cells (program ``LearnedHead``) are computed like any
program's: the environment's ``heads_root`` holds each encoder's trained head
(:mod:`embedding_ttc.analysis.heads`, trained before the matrix runs), and
:meth:`MatrixEnvironment.program` builds it as a program for that encoder's groups. Program
files (:mod:`embedding_ttc.program_files.program_file`) travel in the environment too, as their
sources, and are built there into sandboxed programs; their cells record their source's
sha256.

Groups run over an :class:`~embedding_ttc.executors.Executor` (:func:`run_groups`), one job
per group, in any order: in this process, one group after another, each announced as it
starts (:class:`GroupStarted`) and an encoder loaded once per run of groups that use it; or
as Ray tasks, each worker loading its encoder for its group. A group Ray could not finish (a
worker lost, an encoder that does not load there) is a failure of each of its cells, and the
run goes on; in this process an encoder or task that cannot be loaded ends the run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from embedding_ttc.analysis.cells import BASELINE, Cell, CellKey, make_cell
from embedding_ttc.analysis.head_store import HeadStore
from embedding_ttc.analysis.heads import LEARNED_HEAD, HeadStoreError
from embedding_ttc.analysis.plan import GroupJob
from embedding_ttc.encoders.base import Encoder
from embedding_ttc.encoders.named import NamedEncoder
from embedding_ttc.evaluation.evaluate import run_programs
from embedding_ttc.evaluation.records import TaskResult
from embedding_ttc.executors import Executor, Lost
from embedding_ttc.program_files.program_file import ProgramFile
from embedding_ttc.program_files.sandbox.limits import DEFAULT_LIMITS, SandboxLimits
from embedding_ttc.programs.base import Program, program_source_sha256
from embedding_ttc.programs.catalog import get_program
from embedding_ttc.programs.outcome import CandidateError, Status
from embedding_ttc.tasks.task import RetrievalTask, sample_queries


@dataclass(frozen=True)
class MatrixEnvironment:
    """How a worker obtains encoders and tasks (plain values, so Ray can ship it to workers).

    Attributes:
        data_root: folder of task folders (``None``: the default data root).
        cache_dir: embedding cache (``None``: the default cache directory).
        backend: encoder runtime (``torch`` or ``onnx-int8``).
        device: where encoders run (see :mod:`embedding_ttc.encoders.device`; ``auto`` is
            resolved by the worker that loads the encoder).
        use_cache: wrap encoders in the on-disk
            :class:`~embedding_ttc.encoders.cache.CachedEncoder`.
        heads_root: the matrix directory whose ``heads/`` holds the trained learned heads
            (:class:`~embedding_ttc.analysis.head_store.HeadStore`); needed only by ``LearnedHead``
            cells.
        program_files: the study's program files, each built by name into a sandboxed
            program.
        program_limits: the sandbox's limits of every call of a program file.

    """

    data_root: Path | None = None
    cache_dir: Path | None = None
    backend: str = "torch"
    device: str = "auto"
    use_cache: bool = True
    heads_root: Path | None = None
    program_files: tuple[ProgramFile, ...] = ()
    program_limits: SandboxLimits = DEFAULT_LIMITS

    def encoder(self, name: str) -> Encoder:
        """Load encoder ``name``, wrapped in the on-disk cache."""
        return NamedEncoder(
            name, self.backend, self.cache_dir, self.use_cache, device=self.device
        ).load()

    def task(self, name: str) -> RetrievalTask:
        """Load task ``name``."""
        from embedding_ttc.tasks.catalog import load_task

        return load_task(name, self.data_root)

    def sources(self) -> dict[str, str]:
        """The sha256 of every program file's source, by program name."""
        return {f.name: f.sha256 for f in self.program_files}

    def program(self, name: str, encoder: str) -> Program:
        """Build program ``name`` for ``encoder``'s cells (``LearnedHead``: its trained head).

        Raises:
            ProgramRejected: ``name`` is a program file the static checks refused.

        """
        for file in self.program_files:
            if file.name == name:
                return file.sandboxed(self.program_limits)
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
    """A cell that could not be computed this time, with the status and reason; it stays missing.

    ``status`` is a program file's sandbox status (``timeout``, ``crashed``, ``rejected``,
    ``budget``, ``memory``, ``invalid_output``), and for any program ``invalid_output`` or
    ``memory`` when that is what happened, else ``crashed``.
    """

    key: CellKey
    reason: str
    status: Status = Status.CRASHED


Event = GroupStarted | Cell | CellFailure


def failure_of(exc: BaseException) -> tuple[Status, str]:
    """The status and reason a cell's failure records for ``exc``.

    A :class:`~embedding_ttc.programs.outcome.CandidateError` (the sandbox's failures, a
    static check's refusal, a bad output) carries both; a ``MemoryError`` is ``memory``; any
    other exception is ``crashed``, its reason the exception's type and message.
    """
    if isinstance(exc, CandidateError):
        return exc.status, exc.reason
    status = Status.MEMORY if isinstance(exc, MemoryError) else Status.CRASHED
    return status, f"{type(exc).__name__}: {exc}"


def compute_group(
    job: GroupJob,
    encoder: Encoder,
    task: RetrievalTask,
    resolve: Callable[[str], Program] | None = None,
) -> Iterator[Event]:
    """Run P0 and the job's programs on ``task``; yield each cell (or failure) as it exists.

    ``resolve`` builds a program from its name (default: the program registry). A program
    that cannot be built because it was refused (a program file that failed the static
    checks) is a failure of its cell, found before anything is encoded.
    """
    build = resolve or get_program
    if job.queries is not None:
        task = sample_queries(task, job.queries)
    built: dict[str, Program] = {}
    for name in job.programs:
        if name == BASELINE:
            continue
        try:
            built[name] = build(name)
        except CandidateError as exc:
            yield CellFailure(CellKey(job.encoder, job.task, name), exc.reason, exc.status)
    if built or BASELINE in job.programs:
        yield from _run_group(job, encoder, task, build(BASELINE), built)


def _run_group(
    job: GroupJob, encoder: Encoder, task: RetrievalTask, p0: Program, built: dict[str, Program]
) -> Iterator[Event]:
    """P0, then the ``built`` programs in one call; after a failure, again with those after it.

    The base encoding is done again by each call (served from the embedding cache when the
    encoder has one); P0's result of the first call is every cell's baseline.
    """
    cell = partial(make_cell, job.encoder, config=job.bootstrap, query_sample=job.queries)
    remaining = list(built)
    want_p0 = BASELINE in job.programs
    baseline: TaskResult | None = None
    while True:
        names = list(remaining)
        runs = run_programs(
            [p0, *(built[n] for n in names)], task, encoder, shortlist=job.shortlist
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
                sha = program_source_sha256(built[names[finished]])
                yield cell(run.result, baseline, source_sha256=sha)
                finished += 1
            return
        except Exception as exc:  # one failing program must not end a long matrix
            status, reason = failure_of(exc)
            if not started:  # the base encoding or P0 failed: nothing to compare with
                lost = names
                if baseline is None:  # no cell of the group, P0's (if asked for) included
                    lost = [n for n in job.programs if n in built or n == BASELINE]
                for name in lost:
                    yield CellFailure(CellKey(job.encoder, job.task, name), reason, status)
                return
            yield CellFailure(CellKey(job.encoder, job.task, names[finished]), reason, status)
            remaining = names[finished + 1 :]
            if not remaining:
                return


class _LoadedEncoder:
    """The encoder kept loaded between groups in this process, for the next of its groups."""

    def __init__(self) -> None:
        self._loaded: tuple[str, Encoder] | None = None

    def get(self, name: str, env: MatrixEnvironment) -> Encoder:
        """Encoder ``name``: the one loaded, else loaded now (the previous one dropped first)."""
        if self._loaded is None or self._loaded[0] != name:
            self._loaded = None  # drop the previous model before loading the next
            self._loaded = (name, env.encoder(name))
        return self._loaded[1]


def group_events(
    job: GroupJob, env: MatrixEnvironment, loaded: _LoadedEncoder | None = None
) -> Iterator[Event]:
    """The work of one group, wherever it runs: its events.

    In this process (``loaded`` given) the group is announced before its encoder loads, and
    takes its encoder from ``loaded``; in a Ray worker (``None``) it loads its own, and is not
    announced (its events reach the driver together, when it ends).
    """
    task = env.task(job.task)
    if loaded is None:
        encoder = env.encoder(job.encoder)
    else:
        yield GroupStarted(job, task.n_docs + task.n_queries)
        encoder = loaded.get(job.encoder, env)
    yield from compute_group(job, encoder, task, partial(env.program, encoder=job.encoder))


def run_groups(
    executor: Executor, jobs: Sequence[GroupJob], env: MatrixEnvironment
) -> Iterator[Event]:
    """Every group's events, groups in the order they finish, from wherever they run.

    A group the executor lost is a :class:`CellFailure` of each of its cells, with the
    reason Ray gave.
    """
    loaded = _LoadedEncoder() if executor.in_process else None
    events = executor.map(group_events, jobs, ordered=False, shared=(env, loaded))
    with closing(events):
        for job, event in events:
            if isinstance(event, Lost):
                yield from (CellFailure(key, event.reason) for key in job.cell_keys())
            else:
                yield event
