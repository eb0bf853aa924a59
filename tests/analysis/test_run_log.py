"""The transfer run log: append, read (torn last line), wall time of pieces, the report facts."""

import json
from pathlib import Path

import pytest

from embedding_ttc.analysis.run_log import (
    RUN_LOG,
    RunLogError,
    TransferRun,
    append_run,
    format_duration,
    read_runs,
    summed_run_seconds,
    total_wall_seconds,
)

from .cell_factory import cell, smoke_transfer_argv


def run(started: str, wall: float, **kw) -> TransferRun:
    fields = {
        "command": ["embedding-ttc", "transfer", "--out", "x"],
        "started_at": started,
        "wall_seconds": wall,
        "status": "complete",
        "planned": 4,
        "computed": 3,
        "failed": 0,
        "already": 1,
        "executor": "inprocess",
        "embedding_ttc": "0.1.0",
    }
    return TransferRun(**{**fields, **kw})


def test_runs_are_appended_and_read_back_in_order(tmp_path: Path):
    assert read_runs(tmp_path) == []
    first, second = run("2026-11-23T07:00:00+00:00", 60.0), run("2026-11-23T08:00:00+00:00", 5.0)
    append_run(tmp_path, first)
    append_run(tmp_path, second)
    assert read_runs(tmp_path) == [first, second]
    assert len((tmp_path / RUN_LOG).read_text().splitlines()) == 2


def test_a_torn_last_line_is_skipped_and_a_bad_middle_line_is_named(tmp_path: Path):
    good = run("2026-11-23T07:00:00+00:00", 60.0)
    append_run(tmp_path, good)
    with open(tmp_path / RUN_LOG, "a", encoding="utf-8") as fh:
        fh.write('{"schema_version": 1, "kind": "transfer_ru')  # killed mid-write
    assert read_runs(tmp_path) == [good]
    later = run("2026-11-23T08:00:00+00:00", 5.0)
    append_run(tmp_path, later)  # the next run cuts the torn line before appending
    assert read_runs(tmp_path) == [good, later]
    (tmp_path / RUN_LOG).write_text(
        good.model_dump_json()
        + "\n"
        + json.dumps({"kind": "other"})
        + "\n"
        + good.model_dump_json()
        + "\n"
    )
    with pytest.raises(RunLogError, match=rf"{RUN_LOG}:2: not a transfer run record"):
        read_runs(tmp_path)


def test_wall_time_is_the_union_of_the_runs_spans():
    a = run("2026-11-23T07:00:00+00:00", 600.0)  # 07:00-07:10
    b = run("2026-11-23T07:05:00+00:00", 600.0)  # 07:05-07:15, beside a
    c = run("2026-11-23T08:00:00+00:00", 30.0)  # later, alone
    inside = run("2026-11-23T07:01:00+00:00", 60.0)  # wholly inside a
    assert total_wall_seconds([a]) == 600.0
    assert total_wall_seconds([c, a, b]) == 900.0 + 30.0
    assert total_wall_seconds([a, inside]) == 600.0
    assert summed_run_seconds([a, b, c]) == 1230.0
    assert total_wall_seconds([]) == 0.0


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(9.25, "9.2 s"), (60, "1 min 00 s"), (760, "12 min 40 s"), (3600 * 3 + 300, "3 h 05 min")],
)
def test_durations_read_as_a_person_would_write_them(seconds: float, text: str):
    assert format_duration(seconds) == text


def test_transfer_logs_each_run_and_the_report_sums_them(packaged_datasets, tmp_path, capsys):
    from embedding_ttc.analysis.report_html import render_html
    from embedding_ttc.analysis.report_page import build_page
    from embedding_ttc.cli import main

    out = tmp_path / "study"
    argv = smoke_transfer_argv(
        out, packaged_datasets, "--cache-dir", str(tmp_path / "cache"), "--no-progress"
    )
    assert main(argv) == 0
    assert main(argv) == 0  # a second piece: nothing left to compute
    capsys.readouterr()
    first, second = read_runs(out)
    assert first.command == ["embedding-ttc", *argv]
    assert (first.status, first.planned, first.computed, first.already) == ("complete", 2, 2, 0)
    assert (second.computed, second.already) == (0, 2)
    assert first.wall_seconds > 0 and first.cpus is not None
    page = build_page(out)
    assert page.runs == (first, second)
    html = render_html(page, [])
    assert "2 in runs.jsonl, 2 cells computed; wall time" in html
    assert "2 transfer runs" in html


def test_an_interrupted_transfer_logs_its_run_and_exits_130(
    packaged_datasets, tmp_path, monkeypatch
):
    from embedding_ttc.analysis import groups, matrix, transfer
    from embedding_ttc.cli import main

    def interrupted(plan, store, executor, progress, **kwargs):
        first, second = plan  # one cell written, one failed, then Ctrl-C
        done = cell(first.encoder, first.task, first.program, 0.0)
        progress(matrix.MatrixProgress(1, len(plan), done))
        progress(matrix.MatrixProgress(2, len(plan), groups.CellFailure(second, "boom")))
        raise KeyboardInterrupt

    monkeypatch.setattr(transfer, "run_matrix", interrupted)
    out = tmp_path / "study"
    argv = smoke_transfer_argv(out, packaged_datasets, "--no-progress", programs="P0,SoftCentroid")
    assert main(argv) == 130
    (run,) = read_runs(out)
    assert (run.status, run.computed, run.failed, run.planned) == ("interrupted", 1, 1, 2)
