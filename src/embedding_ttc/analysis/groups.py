"""One group of cells: P0 and the missing programs of one (encoder, task), computed together.

A single :func:`~embedding_ttc.evaluation.evaluate.run_programs` call runs P0 and the group's
programs, so the base encoding of the corpus and the queries is done once and shared (and
served from the on-disk :class:`~embedding_ttc.encoders.cache.CachedEncoder` on later runs).
P0 always runs, as the baseline of every cell of its group; its own cell is produced only when
the group asks for it.

A program that fails on a task (bad output, out of memory, a bug) becomes a
:class:`CellFailure`; its cell stays missing, so the next run retries it, and the group goes
on with the programs after it.

Workers obtain encoders, tasks and programs from a :class:`MatrixEnvironment` of plain
values. The learned-head baseline's cells (program ``LearnedHead``) are computed like any
program's: the environment's ``heads_root`` holds each encoder's trained head
(:mod:`embedding_ttc.analysis.heads`, trained before the matrix runs), and
:meth:`MatrixEnvironment.program` builds it as a program for that encoder's groups.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from embedding_ttc.analysis.cells import BASELINE, Cell, CellKey, make_cell
from embedding_ttc.analysis.head_store import HeadStore
from embedding_ttc.analysis.heads import LEARNED_HEAD, HeadStoreError
from embedding_ttc.analysis.plan import GroupJob
from embedding_ttc.encoders.base import Encoder
from embedding_ttc.evaluation.evaluate import run_programs
from embedding_ttc.evaluation.records import TaskResult
from embedding_ttc.programs.base import Program
from embedding_ttc.programs.catalog import get_program
from embedding_ttc.tasks.task import RetrievalTask, sample_queries


@dataclass(frozen=True)
class MatrixEnvironment:
    """How a worker obtains encoders and tasks (plain values, so Ray can ship it to workers).

    Attributes:
        data_root: folder of task folders (``None``: the default data root).
        cache_dir: embedding cache (``None``: the default cache directory).
        backend: encoder runtime (``torch`` or ``onnx-int8``).
        use_cache: wrap encoders in the on-disk
            :class:`~embedding_ttc.encoders.cache.CachedEncoder`.
        heads_root: the matrix directory whose ``heads/`` holds the trained learned heads
            (:class:`~embedding_ttc.analysis.head_store.HeadStore`); needed only by ``LearnedHead``
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
