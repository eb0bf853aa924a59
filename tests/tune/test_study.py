"""The tune study's committed table is what its committed runs render."""

from __future__ import annotations

from pathlib import Path

import pytest

from embedding_ttc.tune.figure import draw_study
from embedding_ttc.tune.study import STUDY_TABLE, StudyRow, render_study, study_rows, summarise

STUDY = Path(__file__).resolve().parents[2] / "results" / "tune"


def test_the_committed_study_table_is_its_runs_rendering():
    rows = study_rows(STUDY)
    assert rows, "no committed tune run has a report"
    assert (STUDY / STUDY_TABLE).read_text(encoding="utf-8") == render_study(rows)
    assert all(r.test_queries >= 10 and r.ci_low <= r.margin <= r.ci_high for r in rows)


def row(task: str, margin: float, low: float, high: float, kind: str = "searched") -> StudyRow:
    return StudyRow(
        task=task,
        test_queries=20,
        p0=0.5,
        fusion=0.6,
        fusion_program="ConvexHybrid:alpha=0.5,norm=minmax",
        pick="g0001" if kind == "searched" else "tuned fusion",
        pick_kind=kind,
        margin=margin,
        ci_low=low,
        ci_high=high,
        p0_ms=10.0,
        pick_ms=12.0 if kind == "searched" else 14.0,
        wall_seconds=60.0,
    )


def test_the_summary_counts_the_target_s_numbers():
    rows = [
        row("a", 0.03, 0.01, 0.05),
        row("b", 0.0011, -0.01, 0.02),
        row("c", 0.0, 0.0, 0.0, kind="fusion"),
        row("d", -0.04, -0.08, -0.01),
    ]
    summary = summarise(rows)
    assert (summary.tasks, summary.wins, summary.below_zero) == (4, 2, 1)
    assert summary.median_margin == (0.0011 + 0.0) / 2
    # 12 ms is within 1.3 x 10 ms, 14 ms is not
    assert (summary.within_time, summary.timed) == (3, 4)
    assert "on 2," in summary.sentence() and "on 3 of 4" in summary.sentence()


def test_the_study_figure_is_drawn(tmp_path):
    pytest.importorskip("matplotlib")
    rows = [row("a", 0.03, 0.01, 0.05), row("d", -0.04, -0.08, -0.01)]
    path = draw_study(rows, tmp_path / "figures" / "study.svg")
    assert path.read_text(encoding="utf-8").lstrip().startswith("<?xml")


def test_the_readme_states_the_committed_study_s_numbers():
    rows = study_rows(STUDY)
    readme = " ".join((STUDY.parents[1] / "README.md").read_text(encoding="utf-8").split())
    wins = sorted((r.margin for r in rows if r.margin > 0.001), reverse=True)
    said = ", ".join(f"{m:+.4f}" for m in wins[:-1]) + f" and {wins[-1]:+.4f}"
    assert f"the pick beats it on {len(wins)} tasks (by {said} nDCG@10" in readme
    losses = [(r.task, round(r.margin, 4)) for r in rows if r.ci_high < 0]
    assert losses == [("financebench", -0.0468)]
    assert "(financebench, \N{MINUS SIGN}0.0468)" in readme
    fusion_picks = sum(r.pick_kind == "fusion" for r in rows)
    assert (len(rows), fusion_picks) == (14, 7)
    assert "On fourteen tasks" in readme and "the pick on seven" in readme
