"""The frontier derived from ledger records: both admission rules and the Pareto set."""

from __future__ import annotations

import pytest

from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.frontier import (
    FrontierError,
    admitted,
    frontier,
    frontier_json,
    pareto,
    render_frontier,
)
from embedding_ttc.runs.records import LedgerRecord
from ledger_records import evaluated, split_evaluated


def rec(pid: str, c: float, m: float) -> LedgerRecord:
    return evaluated(int(pid[1:]), pid, {"t": m}, cost_ratio=c)


RECORDS = [
    rec("g0", 1.0, 0.0),  # P0
    rec("g1", 2.0, 0.010),  # admitted
    rec("g2", 1.5, -0.002),  # negative: never admitted, dominated by P0
    rec("g3", 3.0, 0.008),  # below the bar; dominated by g1
    rec("g4", 1.2, 0.005),  # not admitted (below g1) but Pareto-optimal
    rec("g5", 5.0, 0.020),  # admitted
    LedgerRecord(generation=6, program_id="g6", status=Status.TIMEOUT, proposer="t"),  # ignored
    rec("g7", 5.0, 0.020),  # exact tie with g5: the earlier one stays
]


def test_admission_rule():
    assert [r.program_id for r in admitted(RECORDS)] == ["g1", "g5"]


def test_pareto_set_cheapest_first():
    assert [r.program_id for r in pareto(RECORDS)] == ["g0", "g4", "g1", "g5"]


def test_frontier_views_and_rendering():
    front = frontier(RECORDS)
    assert front.best is not None and front.best.program_id == "g5"
    assert [r.program_id for r in front.top(2)] == ["g5", "g1"]
    data = frontier_json(front)
    assert [row["program_id"] for row in data["pareto"]] == ["g0", "g4", "g1", "g5"]  # type: ignore[index]
    text = render_frontier(front, len(RECORDS))
    assert "8 programs" in text and "g5" in text and "+0.0200" in text
    assert "+0.0200        -  1/0/0" in text  # no worst query recorded; W/T/L over tasks
    assert data["rule"] == "compute" and data["scope"] == "all"
    assert data["admitted"][0] == {  # type: ignore[index]
        "program_id": "g1",
        "generation": 1,
        "cost_ratio": 2.0,
        "query_time_cost_ratio": None,
        "mean_delta": 0.010,
        "score": 0.010,
        "worst_query_delta": None,
        "wins": 1,
        "ties": 0,
        "losses": 0,
        "novelty": "",
    }


def test_nothing_beats_p0():
    front = frontier([rec("g0", 1.0, 0.0), rec("g1", 2.0, -0.01)])
    assert front.admitted == () and front.best is None
    assert "no program beat P0" in render_frontier(front, 2)


# A run with a split: (search part, validation part) Δ against P0 on two tasks.
SPLIT = [
    split_evaluated(0, "g0", {"a": 0.0, "b": 0.0}, {"a": 0.0, "b": 0.0}),  # P0
    # Best on the search part, but task b loses on its validation part.
    split_evaluated(1, "g1", {"a": 0.30, "b": 0.20}, {"a": 0.20, "b": -0.01}, worst=-0.9),
    # Modest, and nothing loses: the transfer rule's first.
    split_evaluated(2, "g2", {"a": 0.05, "b": 0.05}, {"a": 0.04, "b": 0.0005}, worst=-0.1),
    # Lower validation mean than g2: not admitted by transfer.
    split_evaluated(3, "g3", {"a": 0.10, "b": 0.10}, {"a": 0.02, "b": 0.01}),
    # Higher validation mean than g2 and no loss: admitted by transfer, not by compute (g1).
    split_evaluated(4, "g4", {"a": 0.10, "b": 0.10}, {"a": 0.08, "b": 0.06}, cost_ratio=1.2),
]


def test_compute_rule_reads_all_queries():
    # Whole-task means: g1 (0.25 + 0.095) / 2 = 0.1725; g4 0.085: only g1 passes the bar.
    assert [r.program_id for r in admitted(SPLIT, "compute")] == ["g1"]


def test_transfer_rule_reads_validation_and_refuses_a_losing_task():
    assert [r.program_id for r in admitted(SPLIT, "transfer")] == ["g2", "g4"]
    front = frontier(SPLIT, "transfer")
    assert front.best is not None and front.best.program_id == "g4"
    assert front.score(front.best) == pytest.approx(0.07)
    # Pareto over (c, validation mean): g1 (0.095 at c 1) dominates every other program; the
    # Pareto set does not apply the rule's no-loss condition, the admission does.
    assert [r.program_id for r in front.pareto] == ["g1"]


def test_objective_reference_shifts_the_bar():
    # Against a reference 0.05 above P0 everywhere, only g4's validation beats it, and its
    # task b (0.06 − 0.05) still does not lose.
    assert [r.program_id for r in admitted(SPLIT, "transfer", "reference")] == ["g4"]
    # A program whose validation ties P0 loses to the reference on every task.
    assert admitted(SPLIT[:3], "transfer", "reference") == ()


def test_worst_query_is_shown_beside_the_mean():
    front = frontier(SPLIT, "transfer")
    text = render_frontier(front, len(SPLIT))
    assert "rule transfer" in text and "validation queries" in text
    g2 = next(line for line in text.splitlines() if line.strip().startswith("g2"))
    assert g2.split()[-2:] == ["-0.100", "2/0/0"]  # worst query, then W/T/L over tasks
    rows = {row["program_id"]: row for row in frontier_json(front)["pareto"]}  # type: ignore[union-attr]
    assert rows["g1"]["worst_query_delta"] == pytest.approx(-0.9)
    assert "-0.900" in text


def test_transfer_rule_needs_a_split():
    with pytest.raises(FrontierError, match="validation split"):
        admitted(RECORDS, "transfer")
    with pytest.raises(FrontierError, match="reference program"):
        admitted(RECORDS, "compute", "reference")
    with pytest.raises(FrontierError, match="unknown admission rule"):
        admitted(RECORDS, "best")  # type: ignore[arg-type]
