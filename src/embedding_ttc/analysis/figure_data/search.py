"""The search figures: the Pareto frontier (Fig. 2) and the trajectory (App. B) of a ledger.

``pareto``: every evaluated program of a search as (cost ratio ``c``, mean discovery Δ), the
Pareto set highlighted and the frontier curve drawn from P0 at (1, 0); when the ledger has a
validation split, the programs the transfer rule admits are marked. ``trajectory``: a 2-D
layout of the programs' per-task Δ vectors (:mod:`.layout`), coloured by generation and by
cost, the Pareto programs joined in ascending cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from embedding_ttc.analysis.figure_data.base import Skipped
from embedding_ttc.analysis.figure_data.layout import layout_2d
from embedding_ttc.runs.frontier import admitted, evaluated, pareto
from embedding_ttc.runs.records import LedgerRecord, Objective


@dataclass(frozen=True)
class SearchPoint:
    """One evaluated program of a search ledger."""

    program_id: str
    generation: int
    cost_ratio: float
    mean_delta: float
    on_frontier: bool
    admitted: bool
    transfer_admitted: bool = False


@dataclass(frozen=True)
class ParetoData:
    """Every evaluated program at (c, mean Δ) and the Pareto set (paper Fig. 2).

    Attributes:
        points: every evaluated program, in ledger order.
        frontier: the Pareto programs, in ascending cost.
        curve: the frontier curve, (c, mean Δ) from P0 at (1, 0) through ``frontier``.
        n_tasks: discovery tasks each mean Δ is over.
        n_not_evaluated: ledger candidates without a measurement (rejected, crashed ...).
        label: what the search ran on (encoder, suite), for the title.

    """

    points: tuple[SearchPoint, ...]
    frontier: tuple[SearchPoint, ...]
    curve: tuple[tuple[float, float], ...]
    n_tasks: int
    n_not_evaluated: int
    label: str


def _transfer_admitted(records: Sequence[LedgerRecord], objective: Objective) -> set[str]:
    """The transfer rule's programs against ``objective``, when the ledger has those numbers."""
    if not any(r.deltas(objective, "validation") for r in records):
        return set()
    return {r.program_id for r in admitted(records, "transfer", objective)}


def _points(records: Sequence[LedgerRecord], objective: Objective | None) -> list[SearchPoint]:
    """Every evaluated program; ``objective``: mark the transfer rule's (``None``: do not)."""
    front = {r.program_id for r in pareto(records)}
    adm = {r.program_id for r in admitted(records)}
    transfer = _transfer_admitted(records, objective) if objective is not None else set()
    return [
        SearchPoint(
            program_id=r.program_id,
            generation=r.generation,
            cost_ratio=float(r.cost_ratio or 0.0),
            mean_delta=float(r.mean_delta or 0.0),
            on_frontier=r.program_id in front,
            admitted=r.program_id in adm,
            transfer_admitted=r.program_id in transfer,
        )
        for r in evaluated(records)
    ]


def pareto_data(
    records: Sequence[LedgerRecord], *, label: str = "", objective: Objective = "p0"
) -> ParetoData | Skipped:
    """The Pareto figure of a ledger (:func:`~embedding_ttc.runs.frontier.pareto` decides).

    ``objective``: the baseline of the transfer rule whose programs are marked (the run's).
    """
    points = _points(records, objective)
    if not points:
        return Skipped("pareto", f"the ledger has no evaluated program ({len(records)} records)")
    by_id = {p.program_id: p for p in points}
    frontier = tuple(by_id[r.program_id] for r in pareto(records))
    curve = [(1.0, 0.0)]  # P0: one forward pass, Δ = 0 by definition
    curve += [
        (p.cost_ratio, p.mean_delta) for p in frontier if (p.cost_ratio, p.mean_delta) != (1.0, 0.0)
    ]
    tasks = {len(r.per_task) for r in evaluated(records)}
    return ParetoData(
        points=tuple(points),
        frontier=frontier,
        curve=tuple(curve),
        n_tasks=max(tasks) if tasks else 0,
        n_not_evaluated=len(records) - len(points),
        label=label,
    )


@dataclass(frozen=True)
class TrajectoryPoint:
    """One evaluated program placed by its per-task Δ vector."""

    program_id: str
    generation: int
    cost_ratio: float
    mean_delta: float
    x: float
    y: float
    on_frontier: bool


@dataclass(frozen=True)
class TrajectoryData:
    """The search trajectory of App. B.

    Attributes:
        points: every evaluated program with a Δ on each of ``tasks``, in ledger order.
        path: the Pareto programs' ids in ascending cost (the line through them).
        tasks: the tasks of the Δ vectors.
        method: ``umap`` or ``pca``.
        note: the layout's parameters, or why PCA replaced UMAP.

    """

    points: tuple[TrajectoryPoint, ...]
    path: tuple[str, ...]
    tasks: tuple[str, ...]
    method: Literal["umap", "pca"]
    note: str


def trajectory_data(records: Sequence[LedgerRecord], *, seed: int = 0) -> TrajectoryData | Skipped:
    """Place every evaluated program by its vector of per-task Δ (tasks common to all)."""
    measured = [r for r in evaluated(records) if r.per_task]
    if not measured:
        return Skipped("trajectory", "the ledger has no program with per-task Δ")
    vectors = [r.per_task_delta for r in measured]
    common = set(vectors[0])
    for deltas in vectors[1:]:
        common &= set(deltas)
    tasks = tuple(t for t in vectors[0] if t in common)
    if not tasks:
        return Skipped("trajectory", "the evaluated programs share no task")
    layout = layout_2d([[deltas[t] for t in tasks] for deltas in vectors], seed=seed)
    points = {p.program_id: p for p in _points(records, None)}
    placed = tuple(
        TrajectoryPoint(
            program_id=r.program_id,
            generation=r.generation,
            cost_ratio=points[r.program_id].cost_ratio,
            mean_delta=points[r.program_id].mean_delta,
            x=xy[0],
            y=xy[1],
            on_frontier=points[r.program_id].on_frontier,
        )
        for r, xy in zip(measured, layout.coords, strict=True)
    )
    ids = {p.program_id for p in placed}
    path = tuple(r.program_id for r in pareto(records) if r.program_id in ids)
    return TrajectoryData(placed, path, tasks, layout.method, layout.note)
