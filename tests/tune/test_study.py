"""The tune study's committed table is what its committed runs render."""

from __future__ import annotations

from pathlib import Path

from embedding_ttc.tune.study import STUDY_TABLE, render_study, study_rows

STUDY = Path(__file__).resolve().parents[2] / "results" / "tune"


def test_the_committed_study_table_is_its_runs_rendering():
    rows = study_rows(STUDY)
    assert rows, "no committed tune run has a report"
    assert (STUDY / STUDY_TABLE).read_text(encoding="utf-8") == render_study(rows)
    assert all(r.test_queries >= 10 and r.ci_low <= r.margin <= r.ci_high for r in rows)
