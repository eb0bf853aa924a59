"""Committed study results equal what the code renders from their cells, byte for byte.

A committed ``tables/`` folder is what ``embedding-ttc report DIR`` writes from the cells beside
it; when the report's code changes, the committed tables are re-rendered in the same commit.
Only the tables are compared (the figures and the HTML page are not committed).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from embedding_ttc.analysis.manifest import MANIFEST
from embedding_ttc.analysis.report_page import read_matrix
from embedding_ttc.analysis.tables import write_tables

RESULTS = Path(__file__).resolve().parents[2] / "results"
STUDIES = sorted(p.parent for p in RESULTS.rglob(MANIFEST) if (p.parent / "tables").is_dir())


def test_the_committed_studies_are_found():
    names = {str(p.relative_to(RESULTS)) for p in STUDIES}
    assert {"transfer", "multilingual/ascii", "multilingual/unicode"} <= names


@pytest.mark.parametrize("study", STUDIES, ids=lambda p: str(p.relative_to(RESULTS)))
def test_committed_tables_equal_the_rendered_ones(study: Path, tmp_path: Path):
    write_tables(tmp_path, read_matrix(study).report)
    rendered = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    committed = {
        p.name: p.read_bytes()
        for p in (study / "tables").iterdir()
        if not p.name.startswith("against-")  # `report --against OTHER` writes these
    }
    assert sorted(committed) == sorted(rendered), "re-render: embedding-ttc report " + str(study)
    stale = [name for name in rendered if committed[name] != rendered[name]]
    assert not stale, f"stale tables in {study}/tables: {stale}; re-render with `report`"


def test_the_readme_opens_with_the_committed_deploy_table():
    """README.md cannot include a file, so it carries the deploy table: the committed one."""
    deploy = RESULTS / "transfer-select" / "tables" / "deploy.md"
    table = [ln for ln in deploy.read_text(encoding="utf-8").splitlines() if ln.startswith("|")]
    readme = (RESULTS.parent / "README.md").read_text(encoding="utf-8")
    assert table and "\n".join(table) in readme, f"copy the table of {deploy} into README.md"
    assert readme.index(table[0]) < readme.index("## Quickstart")
