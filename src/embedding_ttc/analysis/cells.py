"""Cells of the transfer matrix: one (encoder, task, program) record each, and their store.

A :class:`Cell` holds everything the transfer tables need about one program on one task under
one encoder: the per-query nDCG@10 of the program and of that encoder's P0 on the same
queries, ΔnDCG@10 (the mean over queries of the per-query difference, the paper's footnote),
the per-query W/T/L at ±0.001, the cost, the timings, and the paired bootstrap of the
difference (:mod:`embedding_ttc.analysis.stats`).

Layout of a :class:`CellStore`::

    OUT/cells/<encoder>/<task>/<program>.json

Each file is written to a temporary name, fsynced and renamed, so an interrupted run leaves
whole cells only, and a re-run computes exactly the cells whose file is absent.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from embedding_ttc.analysis.stats import DEFAULT_RESAMPLES, cell_seed, paired_bootstrap
from embedding_ttc.durable import refuse_other_schema, write_atomic
from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.evaluation.comparison import CountedComparison, compare
from embedding_ttc.evaluation.output import safe_name
from embedding_ttc.evaluation.records import TaskResult

CELL_SCHEMA_VERSION: Literal[3] = 3
BASELINE = "P0"  # every cell's Δ is against its encoder's P0 on the same queries


class CellStoreError(EmbeddingTTCError):
    """A cell file is malformed or holds another cell than its path says."""


@dataclass(frozen=True, order=True)
class CellKey:
    """The address of a cell."""

    encoder: str
    task: str
    program: str

    def __str__(self) -> str:
        return f"{self.encoder} · {self.task} · {self.program}"


@dataclass(frozen=True)
class BootstrapConfig:
    """How cells are bootstrapped: resamples per cell and the base seed of every cell's stream."""

    resamples: int = DEFAULT_RESAMPLES
    seed: int = 0


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BootstrapStats(_Record):
    """The paired bootstrap of a cell's per-query differences (see ``analysis.stats``)."""

    resamples: int
    base_seed: int
    seed: int
    ci_low: float
    ci_high: float
    p_value: float
    significant_win: bool
    significant_loss: bool

    def matches(self, config: BootstrapConfig) -> bool:
        """Whether these statistics were made with ``config``."""
        return self.resamples == config.resamples and self.base_seed == config.seed


class Cell(_Record):
    """One program on one task under one encoder, against that encoder's P0.

    ``per_query`` and ``baseline_per_query`` map every query id of the task to its nDCG@10 under
    the program and under P0; ``comparison`` holds both means, ``delta_ndcg_at_10`` (the mean of
    their difference, also :attr:`delta`) and the per-query W/T/L at ±0.001. Cost fields are
    those of the program's :class:`~embedding_ttc.evaluation.records.CostRecord` (base and
    program calls, ``c``); timings those of its
    :class:`~embedding_ttc.evaluation.records.Timings`. ``bootstrap`` is the paired bootstrap of
    the per-query differences. ``shortlist`` is the number of dense first-stage candidates every
    query's program (and P0) reranked, ``None`` when the whole corpus was scored;
    ``query_sample`` the size of the seeded sample of the task's queries it was scored on
    (``None``: every query). ``program_version`` is the program's ``version``
    (:func:`~embedding_ttc.programs.base.program_version`) when the cell was computed;
    ``source_sha256`` the sha256 of the source of a program read from a file (``None`` for a
    library program), which identifies such a program as ``version`` does a
    library program's (:mod:`embedding_ttc.analysis.staleness`).

    ``tokenizer`` (added within schema 3) is the result's: the tokenizer of the lexical
    channels, ``None`` in a cell made before it was recorded. A cell of another schema is
    refused.
    """

    schema_version: Literal[3] = CELL_SCHEMA_VERSION
    kind: Literal["transfer_cell"] = "transfer_cell"
    encoder: str
    encoder_revision: str
    task: str
    program: str
    n_queries: int
    comparison: CountedComparison
    per_query: dict[str, float]
    baseline_per_query: dict[str, float]
    cost_ratio: float
    query_time_cost_ratio: float
    base_calls: int
    program_calls: int
    index_calls: int
    query_calls: int
    encode_seconds: float
    forward_seconds: float
    algebra_seconds: float
    total_seconds: float
    bootstrap: BootstrapStats
    shortlist: int | None = None
    program_version: int = 1
    query_sample: int | None = None
    source_sha256: str | None = None
    tokenizer: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _current_schema(cls, data: Any) -> Any:
        return refuse_other_schema(data, CELL_SCHEMA_VERSION, "a transfer cell")

    @property
    def key(self) -> CellKey:
        """The cell's address."""
        return CellKey(self.encoder, self.task, self.program)

    @property
    def delta(self) -> float:
        """ΔnDCG@10 against P0 (the comparison's), which most readers of a cell want."""
        return self.comparison.delta_ndcg_at_10

    def differences(self) -> list[float]:
        """Per-query program − P0, in the baseline's query order."""
        return [self.per_query[q] - b for q, b in self.baseline_per_query.items()]

    def restat(self, config: BootstrapConfig) -> Cell:
        """The same cell with its bootstrap recomputed under ``config`` (no re-evaluation)."""
        stats = bootstrap_stats(self.key, self.differences(), config)
        return self.model_copy(update={"bootstrap": stats})


def bootstrap_stats(
    key: CellKey, differences: list[float], config: BootstrapConfig
) -> BootstrapStats:
    """Run the paired bootstrap of one cell with its own seed."""
    seed = cell_seed(config.seed, key.encoder, key.task, key.program)
    result = paired_bootstrap(differences, resamples=config.resamples, seed=seed)
    return BootstrapStats(
        resamples=result.resamples,
        base_seed=config.seed,
        seed=seed,
        ci_low=result.ci_low,
        ci_high=result.ci_high,
        p_value=result.p_value,
        significant_win=result.significant_win,
        significant_loss=result.significant_loss,
    )


def make_cell(
    encoder: str,
    result: TaskResult,
    baseline: TaskResult,
    config: BootstrapConfig,
    query_sample: int | None = None,
    source_sha256: str | None = None,
) -> Cell:
    """The cell of ``result`` against ``baseline`` (P0 on the same task and encoder).

    ``encoder`` is the name the matrix asked for (the result records the encoder's own);
    ``query_sample`` the size of the query sample both were scored on, if any;
    ``source_sha256`` the sha256 of the program's source when it was read from a file.
    """
    key = CellKey(encoder, result.task.name, result.program)
    per_query = dict(result.per_query)
    base = dict(baseline.per_query)
    return Cell(
        encoder=encoder,
        encoder_revision=result.encoder.revision,
        task=result.task.name,
        program=result.program,
        n_queries=len(base),
        comparison=compare(result, baseline),
        per_query=per_query,
        baseline_per_query=base,
        cost_ratio=result.cost.cost_ratio,
        query_time_cost_ratio=result.cost.query_time_cost_ratio,
        base_calls=result.cost.base_calls,
        program_calls=result.cost.program_calls,
        index_calls=result.cost.index_calls,
        query_calls=result.cost.query_calls,
        encode_seconds=result.timings.encode_seconds,
        forward_seconds=result.timings.forward_seconds,
        algebra_seconds=result.timings.algebra_seconds,
        total_seconds=result.timings.total_seconds,
        bootstrap=bootstrap_stats(key, [per_query[q] - b for q, b in base.items()], config),
        shortlist=result.shortlist,
        program_version=result.program_version,
        query_sample=query_sample,
        source_sha256=source_sha256,
        tokenizer=result.tokenizer,
    )


def _schema_version(text: str) -> object:
    """The ``schema_version`` a cell file declares (``None``: none, or not a JSON object)."""
    try:
        body = json.loads(text)
    except json.JSONDecodeError:
        return None  # the validation of the cell names the problem
    return body.get("schema_version") if isinstance(body, dict) else None


class CellStore:
    """Cells on disk under ``root/cells``; a cell exists exactly when its file does."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.dir = self.root / "cells"

    def path(self, key: CellKey) -> Path:
        """Where the cell ``key`` lives."""
        return (
            self.dir
            / safe_name(key.encoder)
            / safe_name(key.task)
            / f"{safe_name(key.program)}.json"
        )

    def __contains__(self, key: object) -> bool:
        return isinstance(key, CellKey) and self.path(key).is_file()

    def write(self, cell: Cell) -> Path:
        """Write ``cell`` atomically (replacing an older version of it)."""
        path = self.path(cell.key)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, cell.model_dump_json(indent=1) + "\n")
        return path

    def load(self, key: CellKey) -> Cell:
        """Read the cell ``key``.

        Raises:
            FileNotFoundError: when the cell has not been computed.
            CellStoreError: when the file is not a valid cell, or is another cell's.

        """
        path = self.path(key)
        text = path.read_text(encoding="utf-8")
        version = _schema_version(text)
        if version is not None and version != CELL_SCHEMA_VERSION:
            raise CellStoreError(
                f"{path} has schema version {version}, this version reads "
                f"{CELL_SCHEMA_VERSION} only; delete it to recompute the cell"
            )
        try:
            cell = Cell.model_validate_json(text)
        except ValidationError as exc:
            raise CellStoreError(f"{path} is not a valid transfer cell: {exc}") from None
        if cell.key != key:
            raise CellStoreError(f"{path} holds the cell {cell.key}, expected {key}")
        return cell

    def missing(self, keys: Iterable[CellKey]) -> list[CellKey]:
        """The cells of ``keys`` (a plan) not yet computed, in order."""
        return [k for k in keys if k not in self]

    def present(self, keys: Iterable[CellKey]) -> Iterator[Cell]:
        """The computed cells of ``keys``, loaded, in order."""
        for k in keys:
            if k in self:
                yield self.load(k)
