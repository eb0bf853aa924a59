"""The JSONL ledger: durable appends, recovery from a torn final line, clear errors otherwise."""

from __future__ import annotations

import pytest

from embedding_ttc.runs.ledger import Ledger, LedgerError
from embedding_ttc.runs.records import LedgerRecord
from ledger_records import evaluated


def record(generation: int, **kw: object) -> LedgerRecord:
    delta = 0.01 * generation
    return evaluated(
        generation, f"g{generation:04d}", {"t": delta}, cost_ratio=1.0 + generation, **kw
    )


def test_append_and_reload(tmp_path):
    ledger = Ledger(tmp_path)
    ledger.append(record(0))
    path = ledger.save_source("g0001", "def program(Q, D, S, ctx):\n    return S.copy()\n")
    ledger.append(record(1, source_path=str(path.relative_to(tmp_path))))
    again = Ledger(tmp_path)
    assert [r.program_id for r in again.records] == ["g0000", "g0001"]
    assert again.last_generation == 1
    assert "return S.copy()" in (again.source(again.records[1]) or "")
    lines = (tmp_path / "ledger.jsonl").read_text().splitlines()
    assert all('"schema_version":3' in line for line in lines)


def test_a_torn_final_line_is_cut_and_that_generation_runs_again(tmp_path):
    ledger = Ledger(tmp_path)
    ledger.append(record(0))
    ledger.append(record(1))
    path = tmp_path / "ledger.jsonl"
    whole = path.read_bytes()
    path.write_bytes(whole + record(2).model_dump_json().encode()[:37])  # killed mid-append
    again = Ledger(tmp_path)
    assert again.last_generation == 1
    assert path.read_bytes() == whole
    again.append(record(2))
    assert Ledger(tmp_path).last_generation == 2


def test_a_malformed_line_in_the_middle_is_an_error_naming_it(tmp_path):
    ledger = Ledger(tmp_path)
    ledger.append(record(0))
    path = tmp_path / "ledger.jsonl"
    path.write_text(path.read_text() + '{"generation": "x"}\n' + record(2).model_dump_json() + "\n")
    with pytest.raises(LedgerError, match=r"ledger.jsonl:2: not a ledger record"):
        Ledger(tmp_path)


def test_unknown_fields_and_duplicate_ids_are_errors(tmp_path):
    ledger = Ledger(tmp_path)
    ledger.append(record(0))
    with pytest.raises(LedgerError, match="already"):
        ledger.append(record(0))
    path = tmp_path / "ledger.jsonl"
    path.write_text(path.read_text().replace('"reason"', '"surprise":1,"reason"'))
    with pytest.raises(LedgerError, match="surprise"):
        Ledger(tmp_path)
