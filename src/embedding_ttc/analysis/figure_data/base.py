"""What the figure families share: the skipped-figure record and the programs shown by name."""

from __future__ import annotations

from dataclasses import dataclass

from embedding_ttc.analysis.cells import Cell
from embedding_ttc.analysis.heads import LEARNED_HEAD
from embedding_ttc.analysis.transfer_report import TransferReport


@dataclass(frozen=True)
class Skipped:
    """A figure that cannot be drawn, and why (shown in the report in its place)."""

    figure: str
    reason: str


def is_variant(program: str) -> bool:
    """Whether ``program`` is a parametrised variant (``Rocchio:K=3,beta=0.5``)."""
    return ":" in program


def headline_programs(report: TransferReport) -> tuple[str, ...]:
    """The report's programs without parametrised variants and without the learned head."""
    return tuple(p for p in report.programs if not is_variant(p) and p != LEARNED_HEAD)


def is_significant(cell: Cell | None) -> bool:
    """Whether ``cell`` exists and its bootstrap 95% CI excludes 0."""
    return cell is not None and (cell.bootstrap.significant_win or cell.bootstrap.significant_loss)
