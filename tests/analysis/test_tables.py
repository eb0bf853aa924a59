"""The transfer tables: the report's sections as Markdown, CSV and LaTeX."""

import csv
import io

import pytest

from embedding_ttc.analysis.tables import heldout_markdown, sections, to_csv, to_latex, to_markdown
from embedding_ttc.analysis.transfer_report import TransferReport

from .test_transfer_report import CELLS, cell, report


def test_renders_markdown_csv_and_latex():
    r = report()
    grids = sections(r)
    assert list(grids) == [
        *("heldout", "discovery", "programs", "significance", "oracle", "deltas", "cells")
    ]
    md = heldout_markdown(r).splitlines()
    assert md[0] == "| program | c (held-out) | discovery A (2 tasks) | A (3 tasks) | B (3 tasks) |"
    assert md[2] == "| X | 1.50 | 1/0/1 | 1/1/1 | 2/0/1 |"
    full = to_markdown(r)
    assert "## Held-out transfer" in full and "9 cells missing" in full
    assert (
        "| X | 6 | 50.00 | – | +0.0008 | +0.0019 | -0.020 | 0 of 6 | 50% | – | 0/0 | 1 | 1 "
        "| t1 | t3 |" in full
    )
    assert "| A | 2/3 | +0.0113 | +0.0500 Y | +0.0040 Y | -0.0200 X |" in full
    assert "| A | X | +0.0100 | -0.0005 | -0.0200* |" in full
    assert "| X | 0/1 | 1/0 |" in full
    # the discovery column in full: its own cost ratio, never the held-out one
    assert "| program | c (discovery) | mean Δ | W/T/L | mean nDCG@10 | d1 | d2 |" in full
    assert "| X | 1.50 | +0.0000 | 1/0/1 | 0.5000 | +0.0100 | -0.0100 |" in full
    assert "| Y | 1.50 | +0.0500 | 1/1/0 | 0.5500 | +0.1000 | +0.0000 |" in full

    csvs = to_csv(r)
    assert set(csvs) == set(grids)
    rows = list(csv.reader(io.StringIO(csvs["programs"])))
    assert rows[0][:7] == [
        *("program", "cells", "c_q", "validation Δ", "median Δ", "mean Δ", "worst query")
    ]
    assert float(rows[1][4]) == pytest.approx(0.00075)  # full precision in CSV
    cells = list(csv.DictReader(io.StringIO(csvs["cells"])))
    assert len(cells) == len(r.cells) == 15
    assert {c["split"] for c in cells} == {"heldout", "discovery"}

    tex = to_latex(r)
    assert set(tex) == set(grids)
    assert r"\textsc{X} & $1.50$ & $1/0/1$ & $1/1/1$ & $2/0/1$ \\" in tex["heldout"]
    assert tex["heldout"].startswith(r"\begin{tabular}{@{}lcccc@{}}")
    assert r"$-0.0200^{*}$" in tex["deltas"]
    assert r"$50\%$" in tex["programs"]


def test_no_discovery_column_no_discovery_table():
    assert "discovery" not in sections(report(discovery_encoder=None))


def test_shortlisted_tasks_are_named_in_the_report_and_every_cell_row():
    assert report().shortlists == {} and "Shortlist mode" not in to_markdown(report())
    cells = [c.model_copy(update={"shortlist": 100}) if c.task == "t3" else c for c in CELLS]
    r = TransferReport.from_cells(
        cells, encoders=["A", "B"], tasks=["t1", "t2", "t3"], programs=["X", "Y"]
    )
    assert r.shortlists == {"t3": 100}
    assert "Shortlist mode: on t3 (top 100), every program" in to_markdown(r)
    rows = list(csv.DictReader(io.StringIO(to_csv(r)["cells"])))
    assert {(row["task"], row["shortlist"]) for row in rows} == {
        ("t1", ""),
        ("t2", ""),
        ("t3", "100"),
    }


def test_every_held_out_cell_head_to_head_against_the_reference():
    assert "reference" not in sections(report())  # BM25DenseRRF was not run
    cells = [
        *CELLS,
        cell("A", "t1", "BM25DenseRRF", 0.02),
        cell("A", "t2", "BM25DenseRRF", -0.01),
        cell("B", "t1", "BM25DenseRRF", 0.0),
    ]
    r = TransferReport.from_cells(
        cells, encoders=["A", "B"], tasks=["t1", "t2", "t3"], programs=["X", "BM25DenseRRF"]
    )
    grid = sections(r)["reference"]
    assert list(sections(r))[-2:] == ["reference", "cells"]
    assert grid.header == ("encoder", "program", "t1", "t2", "t3")
    # X minus BM25DenseRRF where both were run; the reference gets no row of its own
    assert [row[:2] for row in grid.rows] == [("A", "X"), ("B", "X")]
    a, b = grid.rows
    assert a[2] == pytest.approx(0.01 - 0.02) and a[3] == pytest.approx(-0.0005 + 0.01)
    assert a[4] is None and b[2] == pytest.approx(0.03) and b[3:] == (None, None)
    assert "| A | X | -0.0100 | +0.0095 | – |" in grid.to_markdown()
