"""Where groups of cells run: in this process, or as Ray tasks.

An :class:`Executor` computes :class:`~embedding_ttc.analysis.plan.GroupJob` s and yields their
events: :class:`InProcessExecutor` (default; one group after another, the loaded encoder
reused across its tasks) or :class:`RayExecutor` (one Ray task per group, the ``ray`` extra).
Both yield the same events, and the driver alone writes the store. Program files travel with
the :class:`~embedding_ttc.analysis.groups.MatrixEnvironment` as their sources, so a Ray
worker builds the same sandboxed programs as this process does. The Ray executor holds Ray for
one run with :func:`~embedding_ttc.executors.ray_session`, shared with the search's.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

from embedding_ttc.analysis.groups import (
    CellFailure,
    Event,
    GroupStarted,
    MatrixEnvironment,
    compute_group,
)
from embedding_ttc.analysis.plan import GroupJob
from embedding_ttc.encoders.base import Encoder
from embedding_ttc.errors import UnknownNameError
from embedding_ttc.executors import EXECUTORS, ray_session
from embedding_ttc.executors import import_ray as _import_ray

PURPOSE = "the Ray executor of the transfer matrix"


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
    """Import Ray, or raise :class:`~embedding_ttc.errors.MissingExtraError` naming the extra."""
    return _import_ray(PURPOSE)


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
        import_ray()
        if not jobs:
            return
        with ray_session(
            PURPOSE, address=self.address, num_cpus=self.num_cpus, init_options=self.init_options
        ) as ray:
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
