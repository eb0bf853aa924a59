"""The headline table against every fusion baseline, on cells worked out by hand."""

from __future__ import annotations

import pytest

from embedding_ttc.analysis.comparisons import CellBlock, head_to_head
from embedding_ttc.analysis.headline import headline_grid
from embedding_ttc.analysis.tables import sections
from embedding_ttc.analysis.transfer_report import TransferReport

from .cell_factory import cell

PROGRAMS = ["BM25DenseRRF", "ConvexHybrid", "Pick"]
# Δ against P0 per (encoder, task) cell:
#   BM25DenseRRF: +0.02 everywhere; ConvexHybrid: +0.05 on t1, -0.01 on t2;
#   Pick: +0.04 on t1, +0.03 on t2 (a significant loss on B·t2 nonetheless, by its CI).
DELTAS = {
    "BM25DenseRRF": {"t1": 0.02, "t2": 0.02},
    "ConvexHybrid": {"t1": 0.05, "t2": -0.01},
    "Pick": {"t1": 0.04, "t2": 0.03},
}


def report(programs=PROGRAMS) -> TransferReport:
    cells = [
        cell(e, t, p, d, sig=-1 if (p, e, t) == ("Pick", "B", "t2") else 0)
        for p, by_task in DELTAS.items()
        if p in programs
        for e in ("A", "B")
        for t, d in by_task.items()
    ]
    return TransferReport.from_cells(
        cells, encoders=["A", "B"], tasks=["t1", "t2"], programs=programs
    )


def test_head_to_head_counts_cells_by_the_ndcg_difference():
    r = report()
    held = CellBlock({c.key: c for c in r.cells}, r.encoders, r.tasks)
    pick_vs_convex = head_to_head("Pick", "ConvexHybrid", held, r.threshold)
    assert pick_vs_convex is not None
    assert (pick_vs_convex.wins, pick_vs_convex.ties, pick_vs_convex.losses) == (2, 0, 2)
    p0 = head_to_head("P0", "BM25DenseRRF", held, r.threshold)  # P0 is the cells' baseline side
    assert p0 is not None and (p0.wins, p0.losses) == (0, 4)


def test_the_headline_lists_each_program_against_every_baseline():
    grid = headline_grid(report())
    assert grid is not None
    assert grid.header[:3] == ("program", "won vs BM25DenseRRF", "won vs ConvexHybrid")
    rows = {row[0]: row for row in grid.rows}
    assert list(rows) == ["P0", "BM25DenseRRF", "ConvexHybrid", "Pick"]
    assert rows["P0"][1:] == ("0/4", "2/4", 0.0, 0, 0, 1.0, 1.0)  # ConvexHybrid loses t2
    assert rows["ConvexHybrid"][1:3] == ("2/4", "–")
    pick = rows["Pick"]
    assert pick[1:3] == ("4/4", "2/4")
    assert pick[3] == pytest.approx(0.035)  # median of +0.04, +0.04, +0.03, +0.03
    assert pick[4] == 1  # B·t2 significantly below P0
    assert pick[5] == 0  # no query 0.5 below P0


def test_the_headline_needs_two_fusion_baselines_and_leads_the_tables():
    assert headline_grid(report(["BM25DenseRRF", "Pick"])) is None
    assert "headline" not in sections(report(["BM25DenseRRF", "Pick"]))
    assert next(iter(sections(report()))) == "headline"
    # every program of the matrix has its row: a search's pick is what the table is for
    assert [row[0] for row in sections(report())["headline"].rows][-1] == "Pick"


def test_a_program_without_cells_yet_shows_no_counts():
    r = TransferReport.from_cells(
        report().cells, encoders=["A", "B"], tasks=["t1", "t2"], programs=[*PROGRAMS, "Later"]
    )
    grid = headline_grid(r)
    assert grid is not None
    later = {row[0]: row for row in grid.rows}["Later"]
    assert later[1:] == ("–", "–", None, None, None, None, None)  # not 0 losses: no cell
