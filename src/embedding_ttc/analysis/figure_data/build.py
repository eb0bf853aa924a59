"""Every figure's data for the report, or why a figure is skipped."""

from __future__ import annotations

from dataclasses import dataclass

from embedding_ttc.analysis.cells import Cell
from embedding_ttc.analysis.figure_data.base import Skipped
from embedding_ttc.analysis.figure_data.prf import (
    DEFAULT_PRF_TASK,
    PRFBars,
    PRFGrid,
    prf_bars,
    prf_grid,
)
from embedding_ttc.analysis.figure_data.search import (
    ParetoData,
    TrajectoryData,
    pareto_data,
    trajectory_data,
)
from embedding_ttc.analysis.figure_data.train_vs_test import TrainVsTestData, train_vs_test_data
from embedding_ttc.analysis.figure_data.transfer import (
    EncoderBars,
    EncoderBarsGrid,
    HeatmapData,
    choose_program,
    encoder_bars,
    encoder_bars_grid,
    heatmap_data,
    pooled_deltas,
)
from embedding_ttc.analysis.heads import HeadRecord
from embedding_ttc.analysis.transfer_report import TransferReport
from embedding_ttc.runs.records import LedgerRecord, Objective

FIGURE_NAMES: tuple[str, ...] = (
    "pareto",
    "trajectory",
    "heatmap",
    "encoder_bars",
    "encoder_bars_all",
    "train_vs_test",
    "prf",
    "prf_tasks",
)
"""Every figure of the report, in reading order (the renderers' registry has the same names)."""

FigureData = (
    ParetoData
    | TrajectoryData
    | HeatmapData
    | EncoderBars
    | EncoderBarsGrid
    | TrainVsTestData
    | PRFBars
    | PRFGrid
)


@dataclass(frozen=True)
class FigureInputs:
    """Everything the figures are computed from.

    Attributes:
        report: the transfer report over the matrix's layout.
        cells: every cell found (learned-head and discovery cells of any encoder included).
        ledger: the search run's records, or ``None`` without a search run.
        ledger_note: where the ledger came from, or why there is none.
        search_label: what the search ran on, for the Pareto figure's title.
        search_objective: the baseline the search was run against (its transfer rule's
            programs are marked on the Pareto figure).
        heads: learned-head records.
        heads_note: why there are none, or which could not be read.
        program: the program of the per-encoder bars (``None``: :func:`.transfer.choose_program`).
        prf_task: the task of the Rocchio-against-SoftCentroid bars.
        seed: the trajectory layout's seed.

    """

    report: TransferReport
    cells: tuple[Cell, ...] = ()
    ledger: tuple[LedgerRecord, ...] | None = None
    ledger_note: str = "no search run: pass --search-run RUN (or give it to transfer)"
    search_label: str = ""
    search_objective: Objective = "p0"
    heads: tuple[HeadRecord, ...] = ()
    heads_note: str = ""
    program: str | None = None
    prf_task: str = DEFAULT_PRF_TASK
    seed: int = 0


def build_figures(inputs: FigureInputs) -> dict[str, FigureData | Skipped]:
    """The data of every figure in :data:`FIGURE_NAMES`, or why it is skipped."""
    report = inputs.report
    out: dict[str, FigureData | Skipped] = {}
    if inputs.ledger is None:
        out["pareto"] = Skipped("pareto", inputs.ledger_note)
        out["trajectory"] = Skipped("trajectory", inputs.ledger_note)
    else:
        out["pareto"] = pareto_data(
            inputs.ledger, label=inputs.search_label, objective=inputs.search_objective
        )
        out["trajectory"] = trajectory_data(inputs.ledger, seed=inputs.seed)
    out["heatmap"] = heatmap_data(report)
    program, why = choose_program(report, inputs.program)
    if program and pooled_deltas(report, program):
        out["encoder_bars"] = encoder_bars(report, program, why)
    else:
        out["encoder_bars"] = Skipped("encoder_bars", "no held-out cell of any program")
    out["encoder_bars_all"] = encoder_bars_grid(report)
    out["train_vs_test"] = train_vs_test_data(
        report, inputs.cells or report.cells, inputs.heads, heads_note=inputs.heads_note
    )
    out["prf"] = prf_bars(report, inputs.prf_task)
    out["prf_tasks"] = prf_grid(report)
    return {name: out[name] for name in FIGURE_NAMES}
