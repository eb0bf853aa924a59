"""The frontier derived from ledger records: the paper's admission rule and the Pareto set."""

from __future__ import annotations

from embedding_ttc.evaluation.outcome import Status
from embedding_ttc.search.frontier import admitted, frontier, frontier_json, pareto, render_frontier
from embedding_ttc.search.records import LedgerRecord
from ledger_records import evaluated


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
    assert "+0.0200  1/0/0" in text  # W/T/L over tasks
    assert data["admitted"][0] == {  # type: ignore[index]
        "program_id": "g1",
        "generation": 1,
        "cost_ratio": 2.0,
        "mean_delta": 0.010,
        "wins": 1,
        "ties": 0,
        "losses": 0,
        "novelty": "",
    }


def test_nothing_beats_p0():
    front = frontier([rec("g0", 1.0, 0.0), rec("g1", 2.0, -0.01)])
    assert front.admitted == () and front.best is None
    assert "no program beat P0" in render_frontier(front, 2)
