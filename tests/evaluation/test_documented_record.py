"""The record docs/evaluate.md shows is the record ``evaluate --json`` prints today."""

import json
import re
from pathlib import Path

from embedding_ttc.evaluation.records import SUMMARY_SCHEMA_VERSION, SummaryRow

DOC = Path(__file__).resolve().parents[2] / "docs" / "evaluate.md"


def test_the_documented_summary_record_is_the_current_schema_field_for_field():
    block = re.search(r"```json\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert block, f"{DOC} shows no JSON record"
    shown = json.loads(block.group(1))
    assert shown["schema_version"] == SUMMARY_SCHEMA_VERSION
    # Read as the current schema and written back: nothing upgraded, added or dropped.
    assert SummaryRow.model_validate(shown).model_dump(mode="json") == shown


def test_the_documented_python_example_runs_offline_and_fills_the_embedding_cache(
    tmp_path, monkeypatch
):
    block = re.search(r"From Python:\n\n```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert block, f"{DOC} shows no Python example"
    monkeypatch.setenv("EMBEDDING_TTC_CACHE", str(tmp_path / "cache"))
    printed: list[tuple] = []
    exec(compile(block.group(1), str(DOC), "exec"), {"print": lambda *a: printed.append(a)})
    ((ndcg, cost_ratio),) = printed
    assert 0.0 < ndcg <= 1.0 and cost_ratio == 1.0
    assert any((tmp_path / "cache").rglob("*")), "the example bypassed the embedding cache"
