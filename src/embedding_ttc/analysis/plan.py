"""The cells a transfer run asks for: the plan, per-task settings, and groups of cells.

A :class:`Plan` is an ordered set of (encoder, task, program) cells. Cells are computed in
*groups*, one per (encoder, task) (:class:`GroupJob`), so that the group's programs share one
base encoding (:mod:`embedding_ttc.analysis.groups`).

Two settings are given per task (:class:`PerTaskSetting`: a default and per-task overrides):

* *shortlist mode* (:class:`ShortlistPolicy`): every query's program, P0 included, reranks that
  query's ``K`` best dense first-stage candidates, as a deployed second stage does, so time and
  memory grow with ``|Q|·K`` rather than ``|Q|·|D|`` (:mod:`embedding_ttc.evaluation.batches`);
* a *query sample* (:class:`QuerySample`): a seeded sample of the task's queries, the same for
  every encoder, program and run.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from embedding_ttc.analysis.cells import BootstrapConfig, CellKey


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

    The sample of a task depends on its name and size only
    (:func:`~embedding_ttc.tasks.task.sample_queries`), so every encoder, program and run of the
    matrix scores the same queries.
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
