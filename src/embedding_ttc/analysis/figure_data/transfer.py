"""The held-out transfer figures: the Δ heat-map (Fig. 3) and the per-encoder bars (App. C, Fig. 5).

``heatmap``: per held-out encoder, programs × held-out tasks of Δ, the colour of each task
column scaled by that column's largest |Δ|, significant cells marked. ``encoder_bars`` /
``encoder_bars_all``: per encoder, the median held-out Δ of one program (every program) with
its win-rate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from embedding_ttc.analysis.cells import Cell, CellKey
from embedding_ttc.analysis.figure_data.base import Skipped, headline_programs, is_significant
from embedding_ttc.analysis.stats import median_or_nan
from embedding_ttc.analysis.transfer_report import TransferReport
from embedding_ttc.errors import UnknownNameError
from embedding_ttc.evaluation.comparison import WTL
from embedding_ttc.registry import closest

DEFAULT_PROGRAM = "LexicalHybridRRF"
"""The representative program of the per-encoder bars (App. C), when the matrix has it."""


def normalise_columns(
    values: Sequence[Sequence[float | None]],
) -> tuple[tuple[float | None, ...], ...]:
    """Scale each column by its largest |value| into [−1, 1]; ``None`` stays ``None``.

    The sign is kept (green improvement, red regression) and 0 stays 0, so a column whose
    largest gain is +0.01 is as saturated as one whose largest is +0.2 — the paper's "colour is
    normalised per task (column) to maximise contrast". An all-zero column stays 0.
    """
    rows = [list(r) for r in values]
    n_cols = max((len(r) for r in rows), default=0)
    scale = []
    for j in range(n_cols):
        col = [abs(v) for r in rows if j < len(r) and (v := r[j]) is not None]
        scale.append(max(col, default=0.0))
    return tuple(
        tuple(
            None if v is None else (v / scale[j] if scale[j] > 0 else 0.0) for j, v in enumerate(r)
        )
        for r in rows
    )


@dataclass(frozen=True)
class HeatmapPanel:
    """One encoder's programs × tasks block.

    Attributes:
        encoder: the held-out encoder.
        deltas: Δ per [program][task]; ``None`` where the cell is missing.
        shade: ``deltas`` scaled per task column into [−1, 1] (:func:`normalise_columns`).
        significant: whether the cell's bootstrap 95% CI excludes 0.
        tasks_present: tasks with at least one cell.
        lifted_tasks: tasks on which at least one program wins.

    """

    encoder: str
    deltas: tuple[tuple[float | None, ...], ...]
    shade: tuple[tuple[float | None, ...], ...]
    significant: tuple[tuple[bool, ...], ...]
    tasks_present: int
    lifted_tasks: int


@dataclass(frozen=True)
class HeatmapData:
    """The held-out Δ heat-map (paper Fig. 3): one panel per encoder."""

    programs: tuple[str, ...]
    tasks: tuple[str, ...]
    panels: tuple[HeatmapPanel, ...]
    threshold: float


def heatmap_data(
    report: TransferReport, programs: Sequence[str] | None = None
) -> HeatmapData | Skipped:
    """Programs × held-out tasks per encoder (default rows: :func:`headline_programs`)."""
    rows = tuple(programs) if programs is not None else headline_programs(report)
    index = {c.key: c for c in report.cells}
    panels = []
    for e in report.encoders:
        cells = [[index.get(CellKey(e, t, p)) for t in report.tasks] for p in rows]
        if not any(c is not None for row in cells for c in row):
            continue
        deltas = tuple(tuple(_delta(c) for c in row) for row in cells)
        lifted = sum(
            1
            for j in range(len(report.tasks))
            if any(
                (d := deltas[i][j]) is not None and d > report.threshold for i in range(len(rows))
            )
        )
        panels.append(
            HeatmapPanel(
                encoder=e,
                deltas=deltas,
                shade=normalise_columns(deltas),
                significant=tuple(tuple(is_significant(c) for c in row) for row in cells),
                tasks_present=sum(
                    1 for j in range(len(report.tasks)) if any(row[j] is not None for row in deltas)
                ),
                lifted_tasks=lifted,
            )
        )
    if not rows or not panels:
        return Skipped("heatmap", "no held-out cell of any program")
    return HeatmapData(rows, report.tasks, tuple(panels), report.threshold)


def _delta(cell: Cell | None) -> float | None:
    return None if cell is None else cell.delta


@dataclass(frozen=True)
class EncoderBar:
    """One program on one encoder, over its held-out cells."""

    encoder: str
    median_delta: float
    win_rate: float
    wins: int
    cells: int


@dataclass(frozen=True)
class EncoderBars:
    """One program's per-encoder median held-out Δ and win-rate (App. C, Fig. 5)."""

    program: str
    bars: tuple[EncoderBar, ...]
    n_tasks: int
    threshold: float
    chosen_because: str


@dataclass(frozen=True)
class EncoderBarsGrid:
    """:class:`EncoderBars` of every headline program, for small multiples."""

    panels: tuple[EncoderBars, ...]


def choose_program(report: TransferReport, program: str | None = None) -> tuple[str, str]:
    """The program of the per-encoder bars and why it was chosen.

    Raises:
        UnknownNameError: when ``program`` is not in the report (the closest names suggested).

    """
    if program is not None:
        if program not in report.programs:
            near = closest(program, list(report.programs))
            hint = f" Did you mean: {', '.join(near)}?" if near else ""
            raise UnknownNameError(f"program {program!r} is not in the matrix.{hint}")
        return program, "asked for"
    if DEFAULT_PROGRAM in report.programs:
        return DEFAULT_PROGRAM, "the paper's representative program"
    ranked = [ln for ln in report.lines if ln.program in headline_programs(report) and ln.n_cells]
    if not ranked:
        return "", ""
    best = max(ranked, key=lambda ln: ln.median_delta)
    return best.program, f"highest pooled median Δ ({DEFAULT_PROGRAM} is not in the matrix)"


def pooled_deltas(report: TransferReport, program: str, encoder: str | None = None) -> list[float]:
    """The held-out Δ of ``program`` (on ``encoder`` alone, if given) over the report's cells."""
    return [
        c.delta
        for c in report.cells
        if c.program == program
        and c.task in report.tasks
        and c.encoder in report.encoders
        and (encoder is None or c.encoder == encoder)
    ]


def encoder_bars(report: TransferReport, program: str, why: str = "") -> EncoderBars:
    """Per held-out encoder: the median Δ of ``program`` over the held-out tasks, its win-rate."""
    bars = []
    for e in report.encoders:
        deltas = pooled_deltas(report, program, e)
        wins = WTL.count(deltas, report.threshold).wins
        bars.append(
            EncoderBar(
                encoder=e,
                median_delta=median_or_nan(deltas),
                win_rate=wins / len(deltas) if deltas else math.nan,
                wins=wins,
                cells=len(deltas),
            )
        )
    return EncoderBars(program, tuple(bars), len(report.tasks), report.threshold, why)


def encoder_bars_grid(report: TransferReport) -> EncoderBarsGrid | Skipped:
    """:func:`encoder_bars` of every headline program that has a held-out cell."""
    panels = tuple(
        encoder_bars(report, p) for p in headline_programs(report) if pooled_deltas(report, p)
    )
    if not panels:
        return Skipped("encoder_bars_all", "no held-out cell of any program")
    return EncoderBarsGrid(panels)
