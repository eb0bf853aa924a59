"""Typed, versioned result records (pydantic): unknown fields are errors, every record is tagged.

A :class:`TaskResult` is what :func:`~embedding_ttc.evaluation.evaluate.evaluate` returns and what
``evaluate --out`` writes as ``<encoder>/<task>/<program>.json``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from embedding_ttc.evaluation.outcome import Status

SCHEMA_VERSION = 1
TIE_THRESHOLD = 0.001  # |Δ| <= 0.001 is a tie, as in the paper's W/T/L


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


class TaskResult(_Record):
    """One (encoder, task, program) evaluation with per-query nDCG@10."""

    schema_version: int = SCHEMA_VERSION
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


class Comparison(_Record):
    """A program against the baseline on one task: mean per-query Δ and per-query W/T/L."""

    schema_version: int = SCHEMA_VERSION
    kind: str = "comparison"
    delta_ndcg_at_10: float
    wins: int
    ties: int
    losses: int


def compare(result: TaskResult, baseline: TaskResult) -> Comparison:
    """ΔnDCG@10 = mean over queries of (program − baseline); W/T/L at ±0.001 per query."""
    if result.per_query.keys() != baseline.per_query.keys():
        raise ValueError("results cover different queries; compare runs of the same task")
    deltas = [result.per_query[q] - baseline.per_query[q] for q in baseline.per_query]
    wins = sum(1 for d in deltas if d > TIE_THRESHOLD)
    losses = sum(1 for d in deltas if d < -TIE_THRESHOLD)
    mean = sum(deltas) / len(deltas) if deltas else 0.0
    return Comparison(
        delta_ndcg_at_10=mean, wins=wins, ties=len(deltas) - wins - losses, losses=losses
    )


class SummaryRow(_Record):
    """The flat record ``evaluate --json`` prints, one per (encoder, task, program)."""

    schema_version: int = SCHEMA_VERSION
    status: Literal["ok"] = "ok"
    reason: str = ""
    encoder: str
    task: str
    program: str
    ndcg_at_10: float
    delta_ndcg_at_10: float
    wins: int
    ties: int
    losses: int
    cost_ratio: float
    base_calls: int
    program_calls: int
    index_calls: int
    query_calls: int
    encode_seconds: float
    forward_seconds: float
    algebra_seconds: float
    total_seconds: float


class FailureRow(_Record):
    """The record of a program that produced no result on a task (metrics only when ok).

    ``status`` is how the program failed (``rejected``, ``timeout``, ``memory``, ``crashed``,
    ``invalid_output``; never ``ok``) and ``reason`` says what happened.
    """

    schema_version: int = SCHEMA_VERSION
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
