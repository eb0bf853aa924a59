"""Ledger records: metrics only when ok, one W/T/L over tasks, and ledgers of schema 1 still read.

``data/ledger_schema_1.jsonl`` holds the first two lines of the committed search run
(``results/search/ledger.jsonl``: P0 and g0001) and a timeout line as schema 1 wrote it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pydantic import ValidationError

from embedding_ttc.evaluation.comparison import WTL
from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.frontier import frontier
from embedding_ttc.runs.ledger import LEDGER_FILE, Ledger
from embedding_ttc.runs.records import LEDGER_SCHEMA_VERSION, LedgerRecord
from ledger_records import evaluated

SCHEMA_1 = Path(__file__).parent / "data" / "ledger_schema_1.jsonl"


def schema_1_lines() -> list[dict[str, object]]:
    return [json.loads(line) for line in SCHEMA_1.read_text(encoding="utf-8").splitlines()]


def test_an_evaluated_line_of_schema_1_reads_into_the_current_shape():
    old = schema_1_lines()[1]
    record = LedgerRecord.model_validate(old)
    assert record.schema_version == LEDGER_SCHEMA_VERSION == 3
    assert record.program_id == "g0001" and record.status is Status.OK
    assert record.wtl == WTL(wins=8, ties=0, losses=2)  # over tasks, as schema 1 counted
    assert record.mean_delta == old["mean_delta"] and record.cost_ratio == old["cost_ratio"]
    assert record.per_task_delta == old["per_task_delta"]
    task = record.per_task["aila_casedocs"]
    assert task.comparison.delta_ndcg_at_10 == 0.03456975883014974
    assert task.comparison.ndcg_at_10 == 0.231736292433212
    assert task.comparison.baseline_ndcg_at_10 == 0.19716653360306224
    assert task.comparison.wtl is None  # schema 1 did not record per-query counts
    assert (task.cost_ratio, task.index_calls) == (1.0, 186)
    again = json.loads(record.model_dump_json())
    assert again["schema_version"] == 3
    assert not {"per_task_delta", "wins", "ties", "losses"} & again.keys()
    assert LedgerRecord.model_validate(again) == record


def test_a_line_of_schema_2_reads_without_parts_tails_or_reference():
    current = json.loads(evaluated(1, "g0001", {"a": 0.1, "b": -0.1}).model_dump_json())
    old = {**current, "schema_version": 2}
    del old["query_time_cost_ratio"]
    for task in old["per_task"].values():
        for key in ("query_time_cost_ratio", "worst_query_delta", "reference", "parts"):
            del task[key]
    record = LedgerRecord.model_validate(old)
    assert record.schema_version == 3 and record.mean() == pytest.approx(0.0)
    assert record.deltas("p0", "validation") is None and record.worst_query() is None
    assert record.seen_by_proposer() is record  # no split: nothing to hide


def test_a_failure_of_schema_1_drops_its_zero_counts():
    old = schema_1_lines()[2]
    assert (old["wins"], old["ties"], old["losses"]) == (0, 0, 0)
    record = LedgerRecord.model_validate(old)
    assert record.status is Status.TIMEOUT and record.reason.endswith("600 s")
    assert record.wtl is None and record.per_task == {} and record.mean_delta is None
    assert "wtl" in record.model_dump() and record.model_dump()["wtl"] is None


def test_a_failure_of_schema_1_with_counts_is_refused():
    old = {**schema_1_lines()[2], "wins": 3}
    with pytest.raises(ValidationError, match="a timeout record carries no metrics; found: wtl"):
        LedgerRecord.model_validate(old)


def test_a_ledger_of_schema_1_loads_resumes_and_gives_the_same_frontier(tmp_path: Path):
    shutil.copy(SCHEMA_1, tmp_path / LEDGER_FILE)
    ledger = Ledger(tmp_path)
    assert [r.program_id for r in ledger.records] == ["g0000-P0", "g0001", "g0002"]
    assert ledger.records[0].wtl == WTL(wins=0, ties=10, losses=0)
    ledger.append(evaluated(3, "g0003", {"aila_casedocs": 0.5}, cost_ratio=2.0))
    again = Ledger(tmp_path)
    assert again.last_generation == 3
    lines = (tmp_path / LEDGER_FILE).read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["schema_version"] for line in lines] == [1, 1, 1, 3]
    assert [r.program_id for r in frontier(again.records).admitted] == ["g0001", "g0003"]


def test_metrics_exist_exactly_when_the_status_is_ok():
    ok = evaluated(1, "g0001", {"a": 0.1, "b": -0.1})
    assert ok.wtl == WTL(wins=1, ties=0, losses=1)
    body = ok.model_dump()
    for metric in ("per_task", "mean_delta", "wtl", "cost_ratio"):
        partial = {**body, metric: {} if metric == "per_task" else None}
        with pytest.raises(ValidationError, match=f"needs its metrics; missing: {metric}"):
            LedgerRecord.model_validate(partial)
    failed = {**body, "status": "timeout"}
    with pytest.raises(ValidationError, match="per_task, mean_delta, wtl, cost_ratio"):
        LedgerRecord.model_validate(failed)
    with pytest.raises(ValidationError, match="found: mean_delta"):
        LedgerRecord(
            generation=2, program_id="g2", status=Status.CRASHED, proposer="t", mean_delta=0.0
        )


def test_an_unknown_schema_version_is_refused():
    body = evaluated(1, "g0001", {"a": 0.1}).model_dump()
    with pytest.raises(ValidationError, match="schema_version"):
        LedgerRecord.model_validate({**body, "schema_version": 4})
