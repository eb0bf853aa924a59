"""The cut of a task's judged queries into *tune* and *test*: ``RUN/split.json``.

``tune`` fits a second stage to one task's judged queries; its report is honest only if the
queries it is measured on chose nothing. The cut is made once, when the run starts, by the same
seeded rule as a search's validation split (:func:`~embedding_ttc.runs.split.split_task`: a
permutation of the sorted query ids by ``numpy.random.default_rng([seed, crc32(key)])``), keyed
by ``tune:<task>`` so that it is not the search's own cut of the same ids. About
``test_share`` of the queries go to test.

Every choice the run makes (the fusions' tuning, the program search, the pick) is handed the
task restricted to the **tune** queries
(:func:`~embedding_ttc.tasks.task.restrict_queries`): the test queries are not in the
objects those steps receive, so no number of theirs can reach them. Only the report reads the
test part, once, after ``pick.json`` is written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from embedding_ttc.durable import write_atomic
from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.runs.split import SplitSettings, split_task
from embedding_ttc.tasks.task import RetrievalTask

TUNE_SPLIT_FILE = "split.json"
TUNE_SPLIT_SCHEMA_VERSION: Literal[1] = 1

TEST_SHARE = 0.5
"""The default share of a task's judged queries kept for the test report (half and half)."""

MIN_TUNE_QUERIES = 16
"""The fewest tune queries a run fits on: fewer leave the inner validation part a handful."""

MIN_TEST_QUERIES = 10
"""The fewest test queries a report is computed on."""


class TuneSplitError(EmbeddingTTCError):
    """A task cannot be cut as asked, or the run recorded another cut."""


class TuneSplit(BaseModel):
    """A task's judged queries, cut into tune and test (``RUN/split.json``).

    Attributes:
        task: the task's name.
        encoder: the encoder the run fits with.
        seed: the seed of the cut.
        test_share: the share of queries asked for test.
        tune: the query ids every choice is made on, sorted.
        test: the query ids only the report reads, sorted.

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = TUNE_SPLIT_SCHEMA_VERSION
    task: str
    encoder: str
    seed: int
    test_share: float = Field(gt=0.0, lt=1.0)
    tune: list[str]
    test: list[str]

    @model_validator(mode="after")
    def _disjoint(self) -> TuneSplit:
        if set(self.tune) & set(self.test):
            raise ValueError("a query is both a tune and a test query")
        return self


def split_tune_test(
    task: RetrievalTask, encoder: str, seed: int, test_share: float = TEST_SHARE
) -> TuneSplit:
    """Cut ``task``'s judged queries into tune and test.

    Raises:
        TuneSplitError: a share outside (0, 1), or too few judged queries for either part
            (:data:`MIN_TUNE_QUERIES`, :data:`MIN_TEST_QUERIES`).

    """
    if not 0.0 < test_share < 1.0:
        raise TuneSplitError(f"--test-share must lie strictly between 0 and 1, got {test_share}")
    n = len(set(task.query_ids))
    need = MIN_TUNE_QUERIES + MIN_TEST_QUERIES
    if n < need:
        raise TuneSplitError(
            f"task {task.name} has {n} judged queries; tuning needs at least {need} "
            f"({MIN_TUNE_QUERIES} to tune on, {MIN_TEST_QUERIES} to test on)"
        )
    cut = split_task(
        task.query_ids,
        f"tune:{task.name}",
        seed,
        SplitSettings(validation_share=test_share, minimum=MIN_TEST_QUERIES),
    )
    if len(cut.search) < MIN_TUNE_QUERIES:
        raise TuneSplitError(
            f"task {task.name}: a test share of {test_share} leaves {len(cut.search)} tune "
            f"queries of {n}; tuning needs {MIN_TUNE_QUERIES}: lower --test-share"
        )
    return TuneSplit(
        task=task.name,
        encoder=encoder,
        seed=seed,
        test_share=test_share,
        tune=cut.search,
        test=cut.validation,
    )


def read_tune_split(run_dir: Path) -> TuneSplit | None:
    """``run_dir/split.json``, or ``None`` when the run has none.

    Raises:
        TuneSplitError: the file is not JSON or not a tune split.

    """
    path = run_dir / TUNE_SPLIT_FILE
    if not path.is_file():
        return None
    try:
        return TuneSplit.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise TuneSplitError(f"{path} is not a tune split: {exc}") from None


def record_tune_split(run_dir: Path, split: TuneSplit) -> None:
    """Write ``split`` for a new run, or check it against the one a resumed run recorded.

    Raises:
        TuneSplitError: the run recorded another cut (the task's queries, the encoder, the
            seed or the share changed under it).

    """
    recorded = read_tune_split(run_dir)
    if recorded is None:
        write_atomic(run_dir / TUNE_SPLIT_FILE, split.model_dump_json(indent=1) + "\n")
        return
    if recorded != split:
        fields = [
            k
            for k in ("task", "encoder", "seed", "test_share", "tune", "test")
            if getattr(recorded, k) != getattr(split, k)
        ]
        raise TuneSplitError(
            f"{run_dir / TUNE_SPLIT_FILE} records another cut ({', '.join(fields)} differ); "
            "a run's cut never changes: use a new run folder"
        )
