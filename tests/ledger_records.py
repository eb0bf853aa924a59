"""Hand-made ledger records for the search, frontier, figure and report tests.

A record whose status is ``ok`` carries all its metrics (the ledger's validation requires
them), so the tests build one from its per-task Δ: each task's comparison against a baseline
nDCG@10 of 0.5, the W/T/L over tasks counted by the one rule, the mean Δ unless given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from embedding_ttc.evaluation.comparison import WTL, Comparison
from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.records import LedgerRecord, PartOutcome, TaskDelta, Versus


def comparison(delta: float, *, baseline: float = 0.5) -> Comparison:
    """A one-query comparison with Δ ``delta`` against a baseline nDCG@10 of ``baseline``."""
    return Comparison(
        ndcg_at_10=baseline + delta,
        baseline_ndcg_at_10=baseline,
        delta_ndcg_at_10=delta,
        wtl=WTL.count([delta]),
    )


def task_delta(delta: float, *, baseline: float = 0.5, cost_ratio: float = 1.0) -> TaskDelta:
    """One task's outcome with Δ ``delta`` against a P0 nDCG@10 of ``baseline``."""
    return TaskDelta(
        comparison=comparison(delta, baseline=baseline),
        cost_ratio=cost_ratio,
        index_calls=0,
        query_calls=0,
    )


def evaluated(
    generation: int,
    program_id: str,
    deltas: Mapping[str, float],
    *,
    cost_ratio: float = 1.0,
    mean_delta: float | None = None,
    **fields: Any,
) -> LedgerRecord:
    """An ``ok`` record with per-task Δ ``deltas`` (``mean_delta``: their mean unless given)."""
    fields.setdefault("proposer", "test")
    return LedgerRecord(
        generation=generation,
        program_id=program_id,
        status=Status.OK,
        per_task={t: task_delta(d, cost_ratio=cost_ratio) for t, d in deltas.items()},
        mean_delta=sum(deltas.values()) / len(deltas) if mean_delta is None else mean_delta,
        wtl=WTL.count(deltas.values()),
        cost_ratio=cost_ratio,
        **fields,
    )


def versus(
    delta: float, worst: float | None = None, *, baseline: float = 0.5, deep: int | None = None
) -> Versus:
    """One part's outcome with Δ ``delta`` (its worst query ``worst``, default ``delta``;
    ``deep`` queries below the deep-loss line)."""
    return Versus(
        comparison=comparison(delta, baseline=baseline),
        worst_query_delta=delta if worst is None else worst,
        deep_losses=deep,
    )


def split_evaluated(
    generation: int,
    program_id: str,
    search: Mapping[str, float],
    validation: Mapping[str, float],
    *,
    reference_gap: float = 0.05,
    cost_ratio: float = 1.0,
    worst: float | None = None,
    held_aside: Mapping[str, float] | None = None,
    deep: int | None = None,
    **fields: Any,
) -> LedgerRecord:
    """An ``ok`` record of a run with a split and a reference.

    Each task's Δ against P0 is ``search[t]`` on its search part and ``validation[t]`` on its
    validation part (the whole task: their mean); a task of ``held_aside`` (a validation
    task) has only its validation part, of Δ ``held_aside[t]``. The reference is
    ``reference_gap`` above P0 everywhere, so each Δ against it is ``reference_gap`` lower.
    ``worst`` is every part's worst query (default: its Δ); ``deep`` is every part's count of
    deep losses against P0 (default: not counted).
    """
    fields.setdefault("proposer", "test")
    per_task = {}

    def part(delta: float) -> PartOutcome:
        return PartOutcome(
            p0=versus(delta, worst, deep=deep), reference=versus(delta - reference_gap, worst)
        )

    for t in search:
        s, v = search[t], validation[t]
        whole = (s + v) / 2
        per_task[t] = TaskDelta(
            comparison=versus(whole).comparison,
            cost_ratio=cost_ratio,
            index_calls=0,
            query_calls=0,
            query_time_cost_ratio=cost_ratio,
            worst_query_delta=whole if worst is None else worst,
            reference=versus(whole - reference_gap, worst),
            parts={"search": part(s), "validation": part(v)},
        )
    for t, v in (held_aside or {}).items():
        per_task[t] = TaskDelta(
            comparison=versus(v).comparison,
            cost_ratio=cost_ratio,
            index_calls=0,
            query_calls=0,
            query_time_cost_ratio=cost_ratio,
            worst_query_delta=v if worst is None else worst,
            reference=versus(v - reference_gap, worst),
            parts={"validation": part(v)},
        )
    deltas = [d.comparison.delta_ndcg_at_10 for d in per_task.values()]
    return LedgerRecord(
        generation=generation,
        program_id=program_id,
        status=Status.OK,
        per_task=per_task,
        mean_delta=sum(deltas) / len(deltas),
        wtl=WTL.count(deltas),
        cost_ratio=cost_ratio,
        query_time_cost_ratio=cost_ratio,
        **fields,
    )
