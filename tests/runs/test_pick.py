"""The pick rule on hand-built ledgers, its registration, and ``frontier --pick``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from embedding_ttc.cli import main
from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.ledger import Ledger
from embedding_ttc.runs.pick import (
    DEFAULT_RULE,
    PICK_RULE_FILE,
    PickError,
    PickRule,
    digest,
    pick,
    read_reference,
    register_rule,
    rule_text,
    write_reference,
)
from embedding_ttc.runs.records import LedgerRecord
from ledger_records import split_evaluated

TASKS = ("a", "b", "c", "d")


def record(
    generation: int,
    validation: dict[str, float],
    *,
    deep: int = 0,
    cost: float = 1.0,
    held: dict[str, float] | None = None,
) -> LedgerRecord:
    """A record whose Δ against P0 is ``validation`` on validation (0.05 less vs reference)."""
    return split_evaluated(
        generation,
        f"g{generation:04d}",
        dict.fromkeys(validation, 0.9),  # search numbers the rule must never read
        validation,
        held_aside=held,
        deep=deep,
        cost_ratio=cost,
    )


REFERENCE = record(0, dict.fromkeys(TASKS, 0.05), deep=3).model_copy(
    update={"program_id": "ConvexHybrid"}
)


def test_the_signal_is_the_trimmed_mean_of_per_task_validation_delta_against_the_reference():
    # Δ against the reference: 0.05 less than against P0 on each of the 5 tasks.
    r = record(1, {"a": 0.0, "b": 0.1, "c": 0.2, "d": 1.05}, held={"e": -0.95})
    # 20 % of 5 tasks = 1 cut from each end: the mean of (0.0, 0.1, 0.2) - 0.05.
    assert DEFAULT_RULE.signal(r) == pytest.approx(0.05)
    assert PickRule(aggregate="mean").signal(r) == pytest.approx(0.08 - 0.05)
    assert PickRule(aggregate="median").signal(r) == pytest.approx(0.1 - 0.05)
    assert PickRule(objective="p0").signal(r) == pytest.approx(0.1)


def test_the_pick_is_the_best_eligible_signal_and_ties_keep_the_earlier():
    records = [
        record(0, dict.fromkeys(TASKS, 0.0)),  # P0-like: no deep loss
        record(1, dict.fromkeys(TASKS, 0.3)),
        record(2, dict.fromkeys(TASKS, 0.9), deep=4),  # 16 deep losses > the reference's 12
        record(3, dict.fromkeys(TASKS, 0.8), cost=1.6),  # too costly at query time
        record(4, dict.fromkeys(TASKS, 0.3)),  # ties g0001: the earlier stays
        record(5, dict.fromkeys(TASKS, 0.4)),
        LedgerRecord(generation=6, program_id="g0006", status=Status.CRASHED, proposer="t"),
    ]
    result = pick(records, DEFAULT_RULE, "x" * 64, REFERENCE)
    assert result.reference_deep_losses == 12  # 3 per task's validation part
    assert [c.record.program_id for c in result.leaders] == ["g0000", "g0001", "g0005"]
    assert result.chosen.record.program_id == "g0005"
    reasons = {c.record.program_id: c.why_not for c in result.candidates}
    assert reasons["g0002"] == "16 deep losses > the reference's 12"
    assert reasons["g0003"] == "query-time cost ratio 1.60 > 1.5"
    assert len(result.candidates) == 6  # the crashed record is not read
    # Without the tail and cost conditions the highest signal wins.
    free = PickRule(relative_tail=False, max_query_cost_ratio=None)
    assert pick(records, free, "x" * 64, None).chosen.record.program_id == "g0002"


def test_the_relative_tail_needs_the_reference_record():
    with pytest.raises(PickError, match=r"reference\.json"):
        pick([record(0, dict.fromkeys(TASKS, 0.0))], DEFAULT_RULE, "x", None)


def test_a_rule_is_registered_once_and_checked_on_resume(tmp_path: Path):
    path = tmp_path / PICK_RULE_FILE
    first = register_rule(tmp_path, [], DEFAULT_RULE)
    assert first == digest(path) and path.read_text() == rule_text(DEFAULT_RULE)
    records = [record(0, dict.fromkeys(TASKS, 0.0)).model_copy(update={"pick_rule": first})]
    # A resume with the default keeps the file, and so does one asking the same rule.
    assert register_rule(tmp_path, records, DEFAULT_RULE) == first
    assert register_rule(tmp_path, records, DEFAULT_RULE, explicit=True) == first
    # Another rule asked by name, once the run has records, is refused.
    with pytest.raises(PickError, match="another rule"):
        register_rule(tmp_path, records, PickRule(trim=0.1), explicit=True)
    # An edited file is refused: the ledger recorded another digest.
    path.write_text(rule_text(PickRule(trim=0.1)))
    with pytest.raises(PickError, match="changed after the run recorded it"):
        register_rule(tmp_path, records, DEFAULT_RULE)
    path.unlink()
    with pytest.raises(PickError, match="is missing"):
        register_rule(tmp_path, records, DEFAULT_RULE)


def test_a_run_made_without_a_rule_does_not_get_one_after_its_results(tmp_path: Path):
    records = [record(0, dict.fromkeys(TASKS, 0.0))]
    assert register_rule(tmp_path, records, DEFAULT_RULE) is None
    assert not (tmp_path / PICK_RULE_FILE).exists()
    with pytest.raises(PickError, match="started without a pick rule"):
        register_rule(tmp_path, records, DEFAULT_RULE, explicit=True)


def test_a_run_not_started_takes_the_rule_asked(tmp_path: Path):
    register_rule(tmp_path, [], DEFAULT_RULE)
    other = PickRule(aggregate="median")
    assert register_rule(tmp_path, [], other, explicit=True) == digest(tmp_path / PICK_RULE_FILE)
    assert json.loads((tmp_path / PICK_RULE_FILE).read_text())["aggregate"] == "median"


def test_the_reference_record_is_written_once(tmp_path: Path):
    write_reference(tmp_path, REFERENCE)
    write_reference(tmp_path, record(9, dict.fromkeys(TASKS, 0.5)))
    assert read_reference(tmp_path) == REFERENCE


def test_frontier_pick_prints_the_registered_pick_and_refuses_an_edited_rule(tmp_path, capsys):
    ledger = Ledger(tmp_path)
    rule = register_rule(tmp_path, [], DEFAULT_RULE)
    write_reference(tmp_path, REFERENCE)
    for g, delta in enumerate((0.0, 0.2, 0.1)):
        ledger.append(record(g, dict.fromkeys(TASKS, delta)).model_copy(update={"pick_rule": rule}))
    assert main(["frontier", str(tmp_path), "--pick"]) == 0
    assert "pick: g0001" in capsys.readouterr().out
    assert main(["frontier", str(tmp_path), "--pick", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["pick"]["program_id"] == "g0001" and out["rule_sha256"] == rule
    (tmp_path / PICK_RULE_FILE).write_text(rule_text(PickRule(aggregate="mean")))
    assert main(["frontier", str(tmp_path), "--pick"]) != 0
    assert "not the rule the ledger recorded" in capsys.readouterr().err


def test_frontier_pick_on_a_run_without_a_rule(tmp_path, capsys):
    Ledger(tmp_path).append(record(0, dict.fromkeys(TASKS, 0.0)))
    assert main(["frontier", str(tmp_path), "--pick"]) != 0
    assert "made without a pick rule" in capsys.readouterr().err
