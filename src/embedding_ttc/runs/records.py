"""A search run's ledger records: one :class:`LedgerRecord` per candidate program.

The ledger (``RUN_DIR/ledger.jsonl``, :mod:`~embedding_ttc.runs.ledger`) holds one
:class:`LedgerRecord` per candidate program, evaluated or not; everything else (frontier,
registry, the history a proposer sees) is derived from it. Unknown fields are errors and every
line carries ``schema_version``. A record's metrics exist exactly when its status is ``ok``
(house style: status apart from metrics).

Each task's :class:`TaskDelta` embeds its :class:`~embedding_ttc.evaluation.comparison.Comparison`
with P0 over all its queries and, since schema 3, the worst query, the comparison with the
run's reference program, and each part of the run's validation split
(:mod:`~embedding_ttc.runs.split`), each a :class:`Versus` (comparison and worst query).
:meth:`LedgerRecord.deltas`, :meth:`LedgerRecord.mean` and :meth:`LedgerRecord.worst_query`
read any of them by objective (``p0`` or ``reference``) and scope (``all``, ``search`` or
``validation``); :meth:`LedgerRecord.seen_by_proposer` is the search part alone, the only view
a proposer is given. A record also carries its ``lesson``
(:mod:`~embedding_ttc.search.lessons`), written from that view alone. A line of another schema
is refused (the ledgers committed before 0.1.0 were rewritten once by
``scripts/migrate_0_1_records.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from embedding_ttc.durable import refuse_other_schema
from embedding_ttc.evaluation.comparison import WTL, Comparison
from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.split import Part

LEDGER_SCHEMA_VERSION: Literal[3] = 3

Objective = Literal["p0", "reference"]
"""Which baseline a Δ is taken against: P0, or the run's reference program."""

OBJECTIVES: tuple[Objective, ...] = ("p0", "reference")

Scope = Literal["all", "search", "validation"]
"""Which queries of a task a Δ is over: all of them, or one part of the run's split."""


class Versus(BaseModel):
    """A program against one baseline over a set of a task's queries, with its tail.

    Attributes:
        comparison: both nDCG@10, the mean Δ and the per-query W/T/L.
        worst_query_delta: the lowest per-query Δ (the tail risk beside the mean).
        deep_losses: how many queries are deep losses (below ``-DEEP_LOSS``,
            :mod:`~embedding_ttc.evaluation.comparison`; ``None`` in records written before
            they were counted).

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    comparison: Comparison
    worst_query_delta: float
    deep_losses: int | None = None

    @property
    def delta(self) -> float:
        """The mean Δ."""
        return self.comparison.delta_ndcg_at_10


class PartOutcome(BaseModel):
    """One part of a task's split against P0 and, when the run has one, the reference."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    p0: Versus
    reference: Versus | None = None


class TaskDelta(BaseModel):
    """One task's outcome for an evaluated program: its comparisons, tails and cost.

    ``comparison`` (all queries against P0) is what every ledger has recorded; its per-query
    W/T/L is ``None`` in the first search run's ledger (``results/search``), which did not
    record it. A task also records the worst query against P0, the comparison with the run's
    reference program (``reference``), each part of the run's validation split (``parts``) and
    the query-time cost ratio; a record of a ledger written before they were has none of
    them. A task
    also records the wall seconds of the program's call outside the encoder
    (``algebra_seconds``: its algebra and text work, in the sandbox for a candidate) and the
    reference's on the same task (``reference_algebra_seconds``), what the cost ratio, which
    counts texts encoded, does not see; ``None`` in records made before.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    comparison: Comparison
    cost_ratio: float
    index_calls: int
    query_calls: int
    query_time_cost_ratio: float | None = None
    worst_query_delta: float | None = None
    reference: Versus | None = None
    parts: dict[Part, PartOutcome] = Field(default_factory=dict)
    algebra_seconds: float | None = None
    reference_algebra_seconds: float | None = None

    def versus(self, objective: Objective = "p0", scope: Scope = "all") -> Versus | None:
        """The outcome against ``objective`` over ``scope``, or ``None`` when not recorded."""
        if scope == "all":
            if objective == "reference":
                return self.reference
            if self.worst_query_delta is None:
                return None
            return Versus(comparison=self.comparison, worst_query_delta=self.worst_query_delta)
        part = self.parts.get(scope)
        if part is None:
            return None
        return part.p0 if objective == "p0" else part.reference

    def held_aside(self, scope: Scope) -> bool:
        """Whether the run's split keeps this whole task out of ``scope``.

        A **validation task** (:mod:`~embedding_ttc.runs.split`) has a validation part and no
        search part: it is held aside from the search scope, and counts in the others.
        """
        return scope != "all" and bool(self.parts) and scope not in self.parts

    def delta(self, objective: Objective = "p0", scope: Scope = "all") -> float | None:
        """The mean Δ against ``objective`` over ``scope`` (``None``: not recorded)."""
        if objective == "p0" and scope == "all":
            return self.comparison.delta_ndcg_at_10
        outcome = self.versus(objective, scope)
        return outcome.delta if outcome is not None else None


@dataclass(frozen=True)
class SuiteScore:
    """An evaluated candidate's numbers over the suite (what an evaluator returns).

    Attributes:
        per_task: each task's outcome, in suite order.
        mean_delta: the mean over tasks of each task's ΔnDCG@10.
        wtl: tasks won, tied and lost (each task's Δ at ±0.001).
        cost_ratio: ``(ΣT_base + ΣT_prog) / ΣT_base`` over the tasks.
        query_time_cost_ratio: the same over query-time calls only (what a deployment pays
            per query; document-side work is done once at index time).

    """

    per_task: dict[str, TaskDelta]
    mean_delta: float
    wtl: WTL
    cost_ratio: float
    query_time_cost_ratio: float | None = None


_METRICS = ("per_task", "mean_delta", "wtl", "cost_ratio")


class LedgerRecord(BaseModel):
    """One line of ``ledger.jsonl``: a candidate program and what became of it.

    The metrics (``per_task``, ``mean_delta``, ``wtl`` over tasks, ``cost_ratio``) are there
    when ``status`` is ``ok`` and absent otherwise; the validation refuses any other mix.
    ``reply`` is the model's last reply when it gave no program (a program's reply lives on in
    its file, a failed draft's in ``attempts``). ``pick_rule`` is the sha256 of the run's pick
    rule file when the record was written (:mod:`~embedding_ttc.runs.pick`).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[3] = LEDGER_SCHEMA_VERSION
    generation: int = Field(ge=0)
    program_id: str
    parent_id: str | None = None
    status: Status
    reason: str = ""
    per_task: dict[str, TaskDelta] = Field(default_factory=dict)
    mean_delta: float | None = None
    wtl: WTL | None = None
    cost_ratio: float | None = None
    query_time_cost_ratio: float | None = None
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
    lesson: str = ""
    reply: str = ""
    pick_rule: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _current_schema(cls, data: Any) -> Any:
        return refuse_other_schema(data, LEDGER_SCHEMA_VERSION, "a ledger line")

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

    def deltas(self, objective: Objective = "p0", scope: Scope = "all") -> dict[str, float] | None:
        """Each task's Δ against ``objective`` over ``scope``; ``None`` unless all recorded.

        A task the run's split holds aside from ``scope`` (a validation task, from the search
        scope) is not in it.
        """
        if self.status is not Status.OK:
            return None
        out = {
            t: d.delta(objective, scope)
            for t, d in self.per_task.items()
            if not d.held_aside(scope)
        }
        if any(v is None for v in out.values()):
            return None
        return {t: float(v) for t, v in out.items() if v is not None}

    def mean(self, objective: Objective = "p0", scope: Scope = "all") -> float | None:
        """The mean over tasks of :meth:`deltas` (``None`` when any is missing)."""
        deltas = self.deltas(objective, scope)
        return sum(deltas.values()) / len(deltas) if deltas else None

    def worst_query(self, objective: Objective = "p0", scope: Scope = "all") -> float | None:
        """The lowest per-query Δ over every task (``None`` when any task lacks it)."""
        tails = self._tails(objective, scope)
        return None if tails is None else min(t.worst_query_delta for t in tails)

    def deep_losses(self, objective: Objective = "p0", scope: Scope = "all") -> int | None:
        """Deep losses (queries below ``-DEEP_LOSS``) over every task of ``scope``.

        ``None`` when any task lacks the count (a record written before it was counted).
        """
        tails = self._tails(objective, scope)
        if tails is None or any(t.deep_losses is None for t in tails):
            return None
        return sum(t.deep_losses or 0 for t in tails)

    def _tails(self, objective: Objective, scope: Scope) -> list[Versus] | None:
        """Each task's outcome in ``scope`` (``None`` when any is missing, or none is there)."""
        if self.status is not Status.OK:
            return None
        tails = [
            d.versus(objective, scope) for d in self.per_task.values() if not d.held_aside(scope)
        ]
        if not tails or any(t is None for t in tails):
            return None
        return [t for t in tails if t is not None]

    def seen_by_proposer(self, objective: Objective = "p0") -> LedgerRecord:
        """The record as a proposer may read it: the search part only, against ``objective``.

        Each task's comparison becomes its search part's (against ``objective``), the mean
        and the W/T/L over tasks are recomputed from those, and nothing of the validation
        part, the reference's other numbers or the whole-task comparison is left. A
        validation task (held aside whole) is not there at all, not even by name. A record
        of a run without a split has no part to hide: it shows its whole tasks.
        """
        if self.status is not Status.OK:
            return self
        split = any(d.parts for d in self.per_task.values())
        scope: Scope = "search" if split else "all"
        if scope == "all" and objective == "p0":
            return self
        per_task = {}
        for name, task in self.per_task.items():
            if task.held_aside(scope):
                continue
            part = task.versus(objective, scope)
            if part is None:
                raise ValueError(f"{self.program_id}: task {name} has no {scope} {objective} Δ")
            per_task[name] = TaskDelta(
                comparison=part.comparison,
                cost_ratio=task.cost_ratio,
                index_calls=task.index_calls,
                query_calls=task.query_calls,
                query_time_cost_ratio=task.query_time_cost_ratio,
                worst_query_delta=part.worst_query_delta,
            )
        deltas = [d.comparison.delta_ndcg_at_10 for d in per_task.values()]
        return self.model_copy(
            update={
                "per_task": per_task,
                "mean_delta": sum(deltas) / len(deltas),
                "wtl": WTL.count(deltas),
            }
        )
