"""The search's typed records: a proposal, its usage, and one ledger line per candidate.

The ledger (``RUN_DIR/ledger.jsonl``) holds one :class:`LedgerRecord` per candidate program,
evaluated or not; everything else (frontier, registry, the history a proposer sees) is derived
from it. Unknown fields are errors and every line carries ``schema_version``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from embedding_ttc.evaluation.outcome import Status

LEDGER_SCHEMA_VERSION = 1


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
    """One task's outcome for an evaluated program."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    delta: float
    ndcg_at_10: float
    baseline_ndcg_at_10: float
    cost_ratio: float
    index_calls: int
    query_calls: int


@dataclass(frozen=True)
class SuiteScore:
    """An evaluated candidate's numbers over the suite (what an evaluator returns)."""

    per_task: dict[str, TaskDelta]
    mean_delta: float
    wins: int
    ties: int
    losses: int
    cost_ratio: float


class LedgerRecord(BaseModel):
    """One line of ``ledger.jsonl``: a candidate program and what became of it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = LEDGER_SCHEMA_VERSION
    generation: int = Field(ge=0)
    program_id: str
    parent_id: str | None = None
    status: Status
    reason: str = ""
    per_task_delta: dict[str, float] = Field(default_factory=dict)
    per_task: dict[str, TaskDelta] = Field(default_factory=dict)
    mean_delta: float | None = None
    wins: int = 0
    ties: int = 0
    losses: int = 0
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
