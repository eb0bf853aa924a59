"""Typed, versioned result records (pydantic): unknown fields are errors, every record is tagged.

A :class:`TaskResult` is what :func:`~embedding_ttc.evaluation.evaluate.evaluate` returns and what
``evaluate --out`` writes as ``<encoder>/<task>/<program>.json``; a :class:`SummaryRow` (embedding
the program's :class:`~embedding_ttc.evaluation.comparison.Comparison` against P0) or a
:class:`FailureRow` is what ``evaluate --json`` prints. Each record's ``schema_version`` is a
``Literal`` of its own module constant; one whose shape changed reads its previous version.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from embedding_ttc.durable import refuse_other_schema
from embedding_ttc.evaluation.comparison import CountedComparison, compare
from embedding_ttc.programs.outcome import Status

TASK_RESULT_SCHEMA_VERSION: Literal[2] = 2
SUMMARY_SCHEMA_VERSION: Literal[3] = 3
FAILURE_SCHEMA_VERSION: Literal[1] = 1


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class EncoderRecord(_Record):
    """Which encoder produced the embeddings."""

    name: str
    family: str
    model_id: str
    revision: str
    dim: int
    views: dict[str, str]
    collapsed: bool


class TaskRecord(_Record):
    """Which task was evaluated."""

    name: str
    n_docs: int
    n_queries: int
    pool: bool
    source: str
    warnings: list[str] = Field(default_factory=list)


class CostRecord(_Record):
    """Encoder calls (texts encoded) and the cost ratio ``c = (T_base + T_prog) / T_base``.

    ``texts`` breaks the calls down by ``stage/side/view`` (stage ``base`` or ``program``, side
    ``index`` for amortisable document-side work or ``query`` for per-query work).
    """

    texts: dict[str, int]
    base_calls: int
    program_calls: int
    index_calls: int
    query_calls: int
    cost_ratio: float
    query_time_cost_ratio: float

    def calls(self, stage: str, side: str) -> int:
        """Texts encoded by ``stage`` (``base``/``program``) on ``side`` (``index``/``query``)."""
        prefix = f"{stage}/{side}/"
        return sum(n for key, n in self.texts.items() if key.startswith(prefix))


class Timings(_Record):
    """Wall-clock seconds.

    ``encode_seconds`` is time inside encoder calls (base and program; a cache hit costs only a
    lookup); ``forward_seconds`` the part of it spent in model forward passes (cache misses);
    ``program_seconds`` the program call, of which ``algebra_seconds`` is outside the encoder;
    ``scoring_seconds`` ranking and nDCG.
    """

    total_seconds: float
    encode_seconds: float
    forward_seconds: float
    program_seconds: float
    algebra_seconds: float
    scoring_seconds: float


class FirstStageRunRecord(_Record):
    """The run file whose candidates every program reranked (``evaluate --first-stage-run``).

    ``sha256`` is of the file's bytes as stored, so the candidates can be checked and
    reproduced; the counts say what of the run was used (see
    :mod:`~embedding_ttc.evaluation.first_stage_run` for the rules).

    Attributes:
        path: the run file, as given.
        sha256: SHA-256 of its bytes.
        depth: each query's candidates were capped at its best ``depth`` (``None``: all).
        lines: the run's lines (documents retrieved, over every query).
        run_queries: distinct query ids in the run.
        covered_queries: task queries evaluated (at least one candidate in the corpus).
        uncovered_queries: task queries the run does not cover, excluded from every program.
        unknown_queries: run query ids that are not queries of the task (their lines dropped).
        unknown_documents: lines dropped because the document is not in the corpus.
        outside_candidates: lines dropped because the document is outside the query's
            candidates (its pool on a reranking task, or the query itself where self-hits are
            excluded).

    """

    path: str
    sha256: str
    depth: int | None
    lines: int
    run_queries: int
    covered_queries: int
    uncovered_queries: int
    unknown_queries: int
    unknown_documents: int
    outside_candidates: int


class TaskResult(_Record):
    """One (encoder, task, program) evaluation with per-query nDCG@10.

    Schema 2 added the extra measures of ``--metrics`` (``metrics``: the aggregate of each,
    ``per_query_metrics``: measure -> query id -> value, ``metrics_depth``: how deep a ranking
    they were computed on) and ``first_stage_run``; a record of another schema is refused.
    ``tokenizer`` (added within schema 2) names the tokenizer of the lexical channels
    (:mod:`embedding_ttc.programs.primitives.tokenizers`) the result was computed under;
    ``None`` in a record made before it was recorded (the tokenizer now called ``letters``).
    """

    schema_version: Literal[2] = TASK_RESULT_SCHEMA_VERSION
    kind: str = "task_result"
    encoder: EncoderRecord
    task: TaskRecord
    program: str
    program_version: int = 1
    shortlist: int | None = None
    first_stage: str | None = None
    ndcg_at_10: float
    per_query: dict[str, float]
    cost: CostRecord
    timings: Timings
    versions: dict[str, str]
    first_stage_run: FirstStageRunRecord | None = None
    metrics: dict[str, float] = Field(default_factory=dict)
    per_query_metrics: dict[str, dict[str, float]] = Field(default_factory=dict)
    metrics_depth: int | None = None
    tokenizer: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _current_schema(cls, data: Any) -> Any:
        return refuse_other_schema(data, TASK_RESULT_SCHEMA_VERSION, "a task result")


class SummaryRow(_Record):
    """The record ``evaluate --json`` prints, one per (encoder, task, program).

    ``comparison`` is the program against P0 on the task (both nDCG@10, the mean Δ, the
    per-query W/T/L); the rest are the program's cost and timings, and ``metrics`` the
    aggregates of the extra measures of ``--metrics`` (added in schema 3). A row of another
    schema is refused.
    """

    schema_version: Literal[3] = SUMMARY_SCHEMA_VERSION
    status: Literal["ok"] = "ok"
    reason: str = ""
    encoder: str
    task: str
    program: str
    comparison: CountedComparison
    cost_ratio: float
    base_calls: int
    program_calls: int
    index_calls: int
    query_calls: int
    encode_seconds: float
    forward_seconds: float
    algebra_seconds: float
    total_seconds: float
    metrics: dict[str, float] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _current_schema(cls, data: Any) -> Any:
        return refuse_other_schema(data, SUMMARY_SCHEMA_VERSION, "a summary row")


def summary_row(encoder: str, task: str, result: TaskResult, baseline: TaskResult) -> SummaryRow:
    """The summary of ``result`` against ``baseline`` (P0 on the same task and encoder).

    ``encoder`` and ``task`` are the names the command was given (the result records the
    encoder's own).
    """
    return SummaryRow(
        encoder=encoder,
        task=task,
        program=result.program,
        comparison=compare(result, baseline),
        cost_ratio=result.cost.cost_ratio,
        base_calls=result.cost.base_calls,
        program_calls=result.cost.program_calls,
        index_calls=result.cost.index_calls,
        query_calls=result.cost.query_calls,
        encode_seconds=result.timings.encode_seconds,
        forward_seconds=result.timings.forward_seconds,
        algebra_seconds=result.timings.algebra_seconds,
        total_seconds=result.timings.total_seconds,
        metrics=dict(result.metrics),
    )


class FailureRow(_Record):
    """The record of a program that produced no result on a task (metrics only when ok).

    ``status`` is how the program failed (``rejected``, ``timeout``, ``memory``, ``crashed``,
    ``invalid_output``; never ``ok``) and ``reason`` says what happened.
    """

    schema_version: Literal[1] = FAILURE_SCHEMA_VERSION
    encoder: str
    task: str
    program: str
    status: Status
    reason: str

    @field_validator("status")
    @classmethod
    def _failed(cls, status: Status) -> Status:
        if status is Status.OK:
            raise ValueError("a failure row's status is a failure, not 'ok'")
        return status
