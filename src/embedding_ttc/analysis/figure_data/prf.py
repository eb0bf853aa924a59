"""Rocchio against SoftCentroid (App. D, Fig. 7): the best Rocchio configuration per encoder.

``prf`` shows one task (ArguAna by default), ``prf_tasks`` every held-out task.
"""

from __future__ import annotations

from dataclasses import dataclass

from embedding_ttc.analysis.cells import CellKey
from embedding_ttc.analysis.comparisons import SOFT_CENTROID
from embedding_ttc.analysis.figure_data.base import Skipped, is_significant
from embedding_ttc.analysis.transfer_report import TransferReport

DEFAULT_PRF_TASK = "birco_arguana"
"""The task of App. D's Rocchio-against-SoftCentroid bars."""


@dataclass(frozen=True)
class PRFBar:
    """Best Rocchio configuration and SoftCentroid on one held-out cell."""

    encoder: str
    task: str
    rocchio_program: str
    rocchio_delta: float
    rocchio_significant: bool
    soft_centroid_delta: float
    soft_centroid_significant: bool


@dataclass(frozen=True)
class PRFBars:
    """App. D's bars on one task: per encoder, best Rocchio against SoftCentroid."""

    task: str
    bars: tuple[PRFBar, ...]
    n_rocchio: int


@dataclass(frozen=True)
class PRFGrid:
    """:class:`PRFBars` of every held-out task that has them."""

    panels: tuple[PRFBars, ...]


def _prf_bars(report: TransferReport) -> tuple[list[PRFBar], int] | Skipped:
    if report.prf is None:
        has_sc = SOFT_CENTROID in report.programs
        missing = "Rocchio variant" if has_sc else SOFT_CENTROID
        return Skipped("prf", f"the matrix has no {missing}: run rocchio-grid and SoftCentroid")
    index = {c.key: c for c in report.cells}
    bars = [
        PRFBar(
            encoder=c.encoder,
            task=c.task,
            rocchio_program=c.best_rocchio,
            rocchio_delta=c.rocchio_delta,
            rocchio_significant=is_significant(
                index.get(CellKey(c.encoder, c.task, c.best_rocchio))
            ),
            soft_centroid_delta=c.soft_centroid_delta,
            soft_centroid_significant=is_significant(
                index.get(CellKey(c.encoder, c.task, SOFT_CENTROID))
            ),
        )
        for c in report.prf.cells
    ]
    return bars, len(report.prf.rocchio_programs)


def prf_bars(report: TransferReport, task: str = DEFAULT_PRF_TASK) -> PRFBars | Skipped:
    """Per encoder on ``task``: the best Rocchio configuration's Δ and SoftCentroid's."""
    found = _prf_bars(report)
    if isinstance(found, Skipped):
        return found
    bars, n = found
    mine = tuple(b for b in bars if b.task == task)
    if not mine:
        return Skipped("prf", f"no held-out cell on {task} has both SoftCentroid and a Rocchio")
    return PRFBars(task, mine, n)


def prf_grid(report: TransferReport) -> PRFGrid | Skipped:
    """:func:`prf_bars` of every held-out task that has both programs."""
    found = _prf_bars(report)
    if isinstance(found, Skipped):
        return Skipped("prf_tasks", found.reason)
    bars, n = found
    panels = tuple(
        PRFBars(t, tuple(b for b in bars if b.task == t), n)
        for t in report.tasks
        if any(b.task == t for b in bars)
    )
    return PRFGrid(panels)
