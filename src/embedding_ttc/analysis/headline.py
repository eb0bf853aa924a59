"""The table a search engineer reads first: each program against every fusion baseline.

For the programs a user weighs when deploying a second stage (P0, BM25, the fusion baselines
of the library, LexicalHybridRRF, then every other program of the matrix, such as a search's
pick), over the held-out cells of a transfer matrix:

* **cells won against each fusion baseline**, head to head: the program's nDCG@10 minus the
  baseline's, per (encoder, task) cell, beyond the tie threshold;
* the **median Δ** against P0 over the cells, the cells **significantly below P0** (bootstrap
  95 % CI below 0) and the **deep losses** (queries more than 0.5 below P0);
* the **cost**: the cost ratio ``c`` over the cells and its query-time part ``c_q`` (the rest
  is paid once at index time).

P0's row is read from the baseline side of the cells (Δ 0 against itself). Pure computation;
the grid renders as the report's other tables do.
"""

from __future__ import annotations

from embedding_ttc.analysis.cells import BASELINE as P0
from embedding_ttc.analysis.comparisons import CellBlock, head_to_head
from embedding_ttc.analysis.transfer_report import TransferReport
from embedding_ttc.evaluation.comparison import DEEP_LOSS
from embedding_ttc.evaluation.grid import Grid, Value

FUSION_BASELINES: tuple[str, ...] = (
    "BM25DenseRRF",
    "ConvexHybrid",
    "ConvexHybrid:alpha=0.3,norm=minmax",
    "WeightedRRF",
)
"""The library's fusion baselines, each at its default (the grids' best on discovery)."""

HEADLINE_PROGRAMS: tuple[str, ...] = ("P0", "BM25", *FUSION_BASELINES, "LexicalHybridRRF")
"""The programs the headline shows first, when the matrix has them."""


def headline_grid(report: TransferReport) -> Grid | None:
    """The headline table, or ``None`` when the matrix has fewer than two fusion baselines.

    Its rows: :data:`HEADLINE_PROGRAMS` the matrix has, then its every other program (a
    search's pick, a program file) in the matrix's order.
    """
    baselines = [b for b in FUSION_BASELINES if b in report.programs]
    if len(baselines) < 2:
        return None
    shown = [p for p in (*HEADLINE_PROGRAMS, *report.programs) if p == P0 or p in report.programs]
    lines = {line.program: line for line in report.lines}
    held = CellBlock({c.key: c for c in report.cells}, report.encoders, report.tasks)
    rows: list[tuple[Value, ...]] = []
    for program in dict.fromkeys(shown):
        won: list[Value] = []
        for b in baselines:
            wtl = None if b == program else head_to_head(program, b, held, report.threshold)
            won.append("–" if wtl is None else f"{wtl.wins}/{wtl.total}")
        if program == P0:
            rows.append((program, *won, 0.0, 0, 0, 1.0, 1.0))
            continue
        line = lines[program]
        if line.n_cells == 0:  # no cell computed yet: nothing to count
            rows.append((program, *won, None, None, None, None, None))
            continue
        below = sum(line.significant_losses.values())
        rows.append(
            (
                program,
                *won,
                line.median_delta,
                below,
                line.deep_losses,
                line.cost_ratio,
                line.query_time_cost_ratio,
            )
        )
    return Grid(
        "Against every fusion baseline, held out: cells won head to head, median Δ against P0, "
        f"cells significantly below P0, queries more than {DEEP_LOSS:g} below P0, cost",
        (
            "program",
            *(f"won vs {b}" for b in baselines),
            "median Δ",
            "cells sig. < P0",
            f"queries < −{DEEP_LOSS:g}",
            "c",
            "c_q",
        ),
        tuple(rows),
        ("", *[""] * len(baselines), "{:+.4f}", "", "", "{:.2f}", "{:.2f}"),
    )
