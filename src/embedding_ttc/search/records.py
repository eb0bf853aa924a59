"""The search's typed records: a proposal, its usage, and one ledger line per candidate.

The ledger (``RUN_DIR/ledger.jsonl``) holds one :class:`LedgerRecord` per candidate program,
evaluated or not; everything else (frontier, registry, the history a proposer sees) is derived
from it. Unknown fields are errors and every line carries ``schema_version``. A record's
metrics exist exactly when its status is ``ok`` (house style: status apart from metrics).

Schema 2 embeds each task's :class:`~embedding_ttc.evaluation.comparison.Comparison` and
counts W/T/L over tasks as one :class:`~embedding_ttc.evaluation.comparison.WTL`; a line of
schema 1 (flat per-task fields, a ``per_task_delta`` copy, ``wins``/``ties``/``losses``, zeros
on a failure) is read into that shape by :meth:`LedgerRecord._read_schema_1`, so a ledger
written before still loads, resumes and reports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from embedding_ttc.evaluation.comparison import WTL, Comparison, lift_flat_comparison
from embedding_ttc.evaluation.outcome import Status

LEDGER_SCHEMA_VERSION: Literal[2] = 2


@dataclass(frozen=True)
class Usage:
    """What one proposer call cost.

    Attributes:
        model: the model that answered (``"structural"`` for the LLM-free proposer).
        tokens_in: prompt tokens (0 when no LLM).
        tokens_out: completion tokens.
        seconds: wall time of the call.
        cost_usd: money spent, when the backend has a price (0.0 for local models).

    """

    model: str
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0
    cost_usd: float = 0.0


@dataclass(frozen=True)
class Attempt:
    """A draft that failed before the real evaluation (pre-check, repair round).

    ``reply`` is the model's whole reply to that call, so the ledger keeps every draft.
    """

    status: Status
    reason: str
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0
    reply: str = ""


@dataclass(frozen=True)
class Proposal:
    """One candidate program as a proposer wrote it.

    Attributes:
        source: the program file's source, or ``None`` when the reply held no code.
        novelty: the one-sentence novelty claim ("" when missing).
        hypothesis: why it should help ("" when missing).
        parent_id: the frontier program it builds on, if any.
        usage: what the call cost.
        proposer: the proposer's name (``"openai"``, ``"structural"`` ...).
        raw_reply: the model's whole reply (kept for forensics).
        attempts: earlier drafts of the same generation that failed a pre-check, with reasons.

    """

    source: str | None
    novelty: str
    hypothesis: str
    usage: Usage
    proposer: str
    parent_id: str | None = None
    raw_reply: str = ""
    attempts: tuple[Attempt, ...] = field(default=())


class TaskDelta(BaseModel):
    """One task's outcome for an evaluated program: its comparison with P0, and its cost.

    ``comparison.wtl`` (the per-query W/T/L) is ``None`` in outcomes read from a ledger of
    schema 1, which did not record it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    comparison: Comparison
    cost_ratio: float
    index_calls: int
    query_calls: int


@dataclass(frozen=True)
class SuiteScore:
    """An evaluated candidate's numbers over the suite (what an evaluator returns).

    Attributes:
        per_task: each task's outcome, in suite order.
        mean_delta: the mean over tasks of each task's ΔnDCG@10.
        wtl: tasks won, tied and lost (each task's Δ at ±0.001).
        cost_ratio: ``(ΣT_base + ΣT_prog) / ΣT_base`` over the tasks.

    """

    per_task: dict[str, TaskDelta]
    mean_delta: float
    wtl: WTL
    cost_ratio: float


_METRICS = ("per_task", "mean_delta", "wtl", "cost_ratio")


class LedgerRecord(BaseModel):
    """One line of ``ledger.jsonl``: a candidate program and what became of it.

    The metrics (``per_task``, ``mean_delta``, ``wtl`` over tasks, ``cost_ratio``) are there
    when ``status`` is ``ok`` and absent otherwise; the validation refuses any other mix.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[2] = LEDGER_SCHEMA_VERSION
    generation: int = Field(ge=0)
    program_id: str
    parent_id: str | None = None
    status: Status
    reason: str = ""
    per_task: dict[str, TaskDelta] = Field(default_factory=dict)
    mean_delta: float | None = None
    wtl: WTL | None = None
    cost_ratio: float | None = None
    novelty: str = ""
    hypothesis: str = ""
    proposer: str
    model: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    llm_seconds: float = 0.0
    cost_usd: float = 0.0
    seconds: float = 0.0
    source_path: str | None = None
    fingerprint: str | None = None
    attempts: list[dict[str, object]] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _read_schema_1(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("schema_version") == 1:
            return _ledger_schema_1(data)
        return data

    @model_validator(mode="after")
    def _metrics_only_when_ok(self) -> LedgerRecord:
        present = [m for m in _METRICS if getattr(self, m) not in (None, {})]
        if self.status is Status.OK and len(present) < len(_METRICS):
            missing = [m for m in _METRICS if m not in present]
            raise ValueError(f"an ok record needs its metrics; missing: {', '.join(missing)}")
        if self.status is not Status.OK and present:
            raise ValueError(
                f"a {self.status.value} record carries no metrics; found: {', '.join(present)}"
            )
        return self

    @property
    def per_task_delta(self) -> dict[str, float]:
        """Each task's ΔnDCG@10 (its comparison's), in suite order; empty unless ``ok``."""
        return {t: d.comparison.delta_ndcg_at_10 for t, d in self.per_task.items()}


def _ledger_schema_1(data: dict[str, Any]) -> dict[str, Any]:
    """A ledger line of schema 1 in the shape of the current schema.

    Schema 1 repeated each task's Δ in ``per_task_delta`` (dropped: it is the per-task
    comparison's), kept the per-task comparison flat (lifted, without per-query W/T/L, which it
    did not record), counted tasks in ``wins``/``ties``/``losses`` (one ``wtl`` when ``ok``),
    and gave a failure zero counts (dropped; non-zero counts on a failure stay, and the
    validation refuses them).
    """
    body = dict(data)
    body.pop("per_task_delta", None)
    per_task = body.get("per_task")
    if isinstance(per_task, dict):
        body["per_task"] = {
            task: lift_flat_comparison(d, delta_key="delta") if isinstance(d, dict) else d
            for task, d in per_task.items()
        }
    counts = {k: body.pop(k) for k in ("wins", "ties", "losses") if k in body}
    if body.get("status") == Status.OK.value or any(counts.values()):
        body["wtl"] = counts or None
    body["schema_version"] = LEDGER_SCHEMA_VERSION
    return body


@dataclass(frozen=True)
class FrontierProgram:
    """A program on the frontier, with its source (what a proposer reads)."""

    record: LedgerRecord
    source: str


@dataclass(frozen=True)
class SearchState:
    """Everything a proposer may look at before writing generation ``generation``.

    Attributes:
        generation: the generation about to be proposed (1-based).
        history: every ledger record so far, in order.
        frontier: the current top-k frontier programs with their sources, best first.
        tasks: the discovery tasks' names, in suite order.
        seed: the run's seed (proposers derive their choices from it and the history).
        views_collapsed: the encoder has one realisation for every view name, so a program
            that scores under another view sees S again.

    """

    generation: int
    history: tuple[LedgerRecord, ...]
    frontier: tuple[FrontierProgram, ...]
    tasks: tuple[str, ...]
    seed: int = 0
    views_collapsed: bool = False
