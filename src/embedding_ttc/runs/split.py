"""The validation split of a search run: whole tasks held aside, the others' queries cut in two.

A search that admits programs by the numbers its proposer optimised selects for the discovery
queries, not for retrieval. The split keeps numbers away from the proposer at two levels:

* **validation tasks** (``SplitSettings.validation_tasks``): whole tasks whose every query is
  in the validation part. The proposer never sees a number of theirs, nor their names; they
  tell whether a program carries over to a task it was not fitted on.
* **search tasks**: each task's queries are cut in a search and a validation part.

Programs run on all queries once, the ledger records each part's comparison separately, the
proposer sees only the **search** part of the search tasks, and the ``transfer`` admission
rule and the pick (:mod:`~embedding_ttc.runs.frontier`, :mod:`~embedding_ttc.runs.pick`) read
only the **validation** part.

The cut is a seeded permutation of each task's query ids, sorted first so that the file order
does not matter: ``numpy.random.default_rng([seed, crc32(task name)])``. About
``validation_share`` of the queries go to validation, but never fewer than ``minimum`` on
either side (a task with fewer than ``2 * minimum`` queries is halved). The cut is written to
``RUN_DIR/split.json`` when the run starts, and a resume recomputes it and refuses to go on if
it differs (the task's queries changed under the run). A validation task's queries all go to
validation.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from embedding_ttc.durable import write_atomic
from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.tasks.task import RetrievalTask

SPLIT_FILE = "split.json"
SPLIT_SCHEMA_VERSION: Literal[1] = 1

VALIDATION_SHARE = 0.3
"""The share of each task's queries held out for validation (the issue's "about 70/30")."""

MINIMUM_PART = 5
"""The fewest queries either part of a task keeps."""

Part = Literal["search", "validation"]
PARTS: tuple[Part, ...] = ("search", "validation")


class SplitError(EmbeddingTTCError):
    """A split cannot be made, read, or matched against the run's recorded one."""


class SplitSettings(BaseModel):
    """How a run splits its queries (recorded in ``search.json``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    validation_share: float = Field(default=VALIDATION_SHARE, gt=0.0, lt=1.0)
    minimum: int = Field(default=MINIMUM_PART, ge=1)
    validation_tasks: list[str] = Field(default_factory=list)
    """Whole tasks held aside from the proposer (all their queries validate)."""

    @model_validator(mode="after")
    def _distinct(self) -> SplitSettings:
        if len(set(self.validation_tasks)) != len(self.validation_tasks):
            raise ValueError("a validation task is named twice")
        return self


class TaskSplit(BaseModel):
    """One task's two parts (query ids, each sorted; a validation task's search part is empty)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    search: list[str]
    validation: list[str]

    @model_validator(mode="after")
    def _disjoint(self) -> TaskSplit:
        if set(self.search) & set(self.validation):
            raise ValueError("a query is in both parts")
        if not self.validation:
            raise ValueError("a task's validation part is empty")
        return self

    def part(self, name: Part) -> list[str]:
        """The query ids of ``name``."""
        return self.search if name == "search" else self.validation


class QuerySplit(BaseModel):
    """The split of every discovery task of a run (``RUN_DIR/split.json``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = SPLIT_SCHEMA_VERSION
    seed: int
    settings: SplitSettings
    tasks: dict[str, TaskSplit]

    def of(self, task: str) -> TaskSplit:
        """The split of ``task``.

        Raises:
            SplitError: the run's split has no such task.

        """
        try:
            return self.tasks[task]
        except KeyError:
            raise SplitError(f"the run's split has no task {task!r}") from None

    @property
    def search_tasks(self) -> list[str]:
        """The tasks whose search part the proposer sees, in order."""
        return [name for name, cut in self.tasks.items() if cut.search]


def split_task(
    query_ids: Sequence[str], name: str, seed: int, settings: SplitSettings
) -> TaskSplit:
    """Cut one task's queries (see the module docstring for the rule).

    Raises:
        SplitError: the task has fewer than two queries.

    """
    ids = sorted(set(query_ids))
    n = len(ids)
    if n < 2:
        raise SplitError(f"task {name} has {n} queries: a split needs at least two")
    floor = min(settings.minimum, n // 2)
    n_validation = min(max(round(n * settings.validation_share), floor), n - floor)
    rng = np.random.default_rng([seed, zlib.crc32(name.encode("utf-8"))])
    order = rng.permutation(n)
    validation = sorted(ids[i] for i in order[:n_validation])
    chosen = set(validation)
    return TaskSplit(search=[q for q in ids if q not in chosen], validation=validation)


def split_queries(tasks: Sequence[RetrievalTask], seed: int, settings: SplitSettings) -> QuerySplit:
    """The split of every task's evaluated queries.

    Raises:
        SplitError: a validation task is not among ``tasks``, or every task would be one.

    """
    names = [t.name for t in tasks]
    missing = [n for n in settings.validation_tasks if n not in names]
    if missing:
        raise SplitError(
            f"validation tasks {', '.join(missing)} are not among the run's tasks "
            f"({', '.join(names)}): a validation task is evaluated with the others"
        )
    if len(settings.validation_tasks) >= len(names):
        raise SplitError("every task is a validation task: the proposer would see nothing")
    return QuerySplit(
        seed=seed,
        settings=settings,
        tasks={
            t.name: (
                TaskSplit(search=[], validation=sorted(set(t.query_ids)))
                if t.name in settings.validation_tasks
                else split_task(t.query_ids, t.name, seed, settings)
            )
            for t in tasks
        },
    )


def write_split(run_dir: Path, split: QuerySplit) -> None:
    """Record ``split`` as ``run_dir/split.json`` (whole, or not at all)."""
    write_atomic(run_dir / SPLIT_FILE, split.model_dump_json(indent=1) + "\n")


def read_split(run_dir: Path) -> QuerySplit | None:
    """``run_dir/split.json``, or ``None`` when the run has none.

    Raises:
        SplitError: the file is not JSON or not a split.

    """
    path = run_dir / SPLIT_FILE
    if not path.is_file():
        return None
    try:
        return QuerySplit.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise SplitError(f"{path} is not a query split: {exc}") from None


def record_split(run_dir: Path, split: QuerySplit) -> None:
    """Write ``split`` for a new run, or check it against the one a resumed run recorded.

    Raises:
        SplitError: the run recorded another split (naming the first task that differs).

    """
    recorded = read_split(run_dir)
    if recorded is None:
        write_split(run_dir, split)
        return
    if recorded == split:
        return
    changed = _first_difference(recorded.tasks, split.tasks)
    raise SplitError(
        f"{run_dir / SPLIT_FILE} records another split than these tasks give ({changed}); "
        "a run's split never changes: use a new --run-dir"
    )


def _first_difference(had: Mapping[str, TaskSplit], now: Mapping[str, TaskSplit]) -> str:
    for name in [*had, *(n for n in now if n not in had)]:
        if had.get(name) != now.get(name):
            return f"task {name}"
    return "settings or seed"
