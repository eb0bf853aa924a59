"""The deploy table: the headline beside each program's measured /v1/rerank latency."""

from __future__ import annotations

import dataclasses

import pytest

from embedding_ttc.analysis.deploy_table import deploy_grid
from embedding_ttc.analysis.headline import headline_grid
from embedding_ttc.analysis.inputs import ReportError
from embedding_ttc.analysis.latency import (
    LATENCY_FILE,
    LatencyRecord,
    LatencyRow,
    read_latency,
    write_latency,
)
from embedding_ttc.analysis.tables import sections, to_markdown

from .test_headline import report


def record(rows: list[LatencyRow]) -> LatencyRecord:
    return LatencyRecord(
        task="scifact",
        docs=1000,
        encoder="enc",
        queries=30,
        threads=1,
        cpus=2,
        command=["benchmarks/rerank_latency.py", "--v1"],
        measured_at="2026-11-28T12:00:00+00:00",
        rows=rows,
    )


TIMED = record(
    [
        LatencyRow(program=p, candidates=n, median_ms=ms, mean_ms=ms + 1)
        for p, n, ms in [
            ("P0", 100, 20.0),
            ("ConvexHybrid", 100, 22.5),
            ("P0", 1000, 60.0),
            ("ConvexHybrid", 1000, 66.0),
        ]
    ]
)


def test_the_record_round_trips_and_its_absence_is_none(tmp_path):
    assert read_latency(tmp_path) is None
    path = write_latency(tmp_path / "matrix", TIMED)
    assert path.name == LATENCY_FILE
    assert read_latency(tmp_path / "matrix") == TIMED
    assert TIMED.candidate_counts == (100, 1000)
    assert TIMED.median_ms("ConvexHybrid", 1000) == 66.0
    assert TIMED.median_ms("Pick", 100) is None


def test_a_malformed_record_is_an_error_naming_its_file(tmp_path):
    (tmp_path / LATENCY_FILE).write_text('{"kind": "deploy_latency", "rows": []}')
    with pytest.raises(ReportError, match=f"{LATENCY_FILE} is not a valid latency record"):
        read_latency(tmp_path)
    (tmp_path / LATENCY_FILE).write_text(
        TIMED.model_dump_json().replace('"candidates":100,', '"candidates":0,')
    )
    with pytest.raises(ReportError, match="candidates"):
        read_latency(tmp_path)


def test_each_headline_row_gains_its_median_per_candidate_count():
    grid = deploy_grid(headline_grid(report()), TIMED)
    assert grid is not None
    assert grid.header[-2:] == ("/v1/rerank ms, 100 candidates", "/v1/rerank ms, 1,000 candidates")
    rows = {row[0]: row for row in grid.rows}
    assert rows["P0"][-2:] == (20.0, 60.0)
    assert rows["ConvexHybrid"][-2:] == (22.5, 66.0)
    assert rows["BM25DenseRRF"][-2:] == (None, None)  # not timed: shown as –
    assert "Pick" not in rows  # not timed, and not a program the table lists first
    assert "| – | – |" in grid.to_markdown().splitlines()[3]  # BM25DenseRRF, after P0
    assert "scifact, an index of 1,000 documents" in grid.title


def test_a_timed_program_of_the_matrix_has_its_row():
    pick = record(
        [*TIMED.rows, LatencyRow(program="Pick", candidates=100, median_ms=50.0, mean_ms=51.0)]
    )
    grid = deploy_grid(headline_grid(report()), pick)
    assert grid is not None
    assert {row[0]: row for row in grid.rows}["Pick"][-2:] == (50.0, None)


def test_the_deploy_table_needs_a_record_and_a_headline_and_then_leads():
    assert deploy_grid(headline_grid(report()), None) is None
    assert "deploy" not in sections(report())
    timed = dataclasses.replace(report(), latency=TIMED)
    assert list(sections(timed))[:2] == ["deploy", "headline"]
    assert "Which second stage to deploy" in to_markdown(timed)
    assert deploy_grid(headline_grid(report(["BM25DenseRRF", "Pick"])), TIMED) is None


def test_the_report_reads_the_record_beside_the_cells(tmp_path):
    from embedding_ttc.analysis.cells import CellStore
    from embedding_ttc.analysis.report import write_report
    from embedding_ttc.analysis.report_page import build_page

    from .cell_factory import cell

    store = CellStore(tmp_path)
    for t in ("t1", "t2"):
        store.write(cell("enc", t, "P0", 0.0))
        store.write(cell("enc", t, "BM25DenseRRF", 0.02))
        store.write(cell("enc", t, "ConvexHybrid", 0.03))
    assert not (write_report(build_page(tmp_path)).tables / "deploy.md").exists()
    write_latency(tmp_path, TIMED)
    tables = write_report(build_page(tmp_path)).tables
    lines = (tables / "deploy.md").read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("## Which second stage to deploy")
    assert [ln.split(" | ")[-2:] for ln in lines if ln.startswith("| ConvexHybrid ")] == [
        ["22.5", "66.0 |"]
    ]
    (tmp_path / LATENCY_FILE).write_text("{}")
    with pytest.raises(ReportError, match="not a valid latency record"):
        build_page(tmp_path)
