"""Ledger records: metrics only when ok, one W/T/L over tasks, older schemas refused."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from embedding_ttc.evaluation.comparison import WTL
from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.ledger import LEDGER_FILE, Ledger, LedgerError
from embedding_ttc.runs.records import LedgerRecord
from ledger_records import evaluated


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


@pytest.mark.parametrize("version", [1, 2, 4])
def test_a_line_of_another_schema_is_refused_naming_the_ledger_and_the_schema(tmp_path, version):
    body = json.loads(evaluated(1, "g0001", {"a": 0.1}).model_dump_json())
    with pytest.raises(ValidationError, match=f"a ledger line of schema {version} is not read"):
        LedgerRecord.model_validate({**body, "schema_version": version})
    (tmp_path / LEDGER_FILE).write_text(json.dumps({**body, "schema_version": version}) + "\n")
    with pytest.raises(LedgerError, match=f"{LEDGER_FILE}.*schema {version} is not read"):
        Ledger(tmp_path)
