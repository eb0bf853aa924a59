"""Hand-made ledger records for the search, frontier, figure and report tests.

A record whose status is ``ok`` carries all its metrics (the ledger's validation requires
them), so the tests build one from its per-task Δ: each task's comparison against a baseline
nDCG@10 of 0.5, the W/T/L over tasks counted by the one rule, the mean Δ unless given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from embedding_ttc.evaluation.comparison import WTL, Comparison
from embedding_ttc.evaluation.outcome import Status
from embedding_ttc.search.records import LedgerRecord, TaskDelta


def task_delta(delta: float, *, baseline: float = 0.5, cost_ratio: float = 1.0) -> TaskDelta:
    """One task's outcome with Δ ``delta`` against a P0 nDCG@10 of ``baseline``."""
    return TaskDelta(
        comparison=Comparison(
            ndcg_at_10=baseline + delta,
            baseline_ndcg_at_10=baseline,
            delta_ndcg_at_10=delta,
            wtl=WTL.count([delta]),
        ),
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
