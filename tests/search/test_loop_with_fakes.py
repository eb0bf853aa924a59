"""The search loop over honest fakes: every outcome of a generation, every stop, and resume.

The collaborators (:mod:`.loop_fakes`) run nothing, so these tests reach what the end-to-end
tests of ``test_loop.py`` cannot in reasonable time: the wall-time and LLM-spending stops.
"""

from __future__ import annotations

from pathlib import Path

from embedding_ttc.evaluation.comparison import WTL
from embedding_ttc.programs.outcome import CandidateError, Status
from embedding_ttc.runs.ledger import Ledger
from embedding_ttc.search.loop import Budget, LoopEvents, SearchLoop
from embedding_ttc.search.proposer import ProposerError
from embedding_ttc.search.state import Usage

from .loop_fakes import (
    FAKE_TASKS,
    FakeChecker,
    FakeClock,
    FakeEvaluator,
    FakeProposer,
    FakeSandbox,
    fake_source,
)


def make_loop(
    run_dir: Path,
    proposer: FakeProposer,
    evaluator: FakeEvaluator,
    sandbox: FakeSandbox | None = None,
    checker: FakeChecker | None = None,
) -> SearchLoop:
    return SearchLoop(
        proposer=proposer,
        checker=checker or FakeChecker(),
        sandbox=sandbox or FakeSandbox(),
        evaluator=evaluator,
        ledger=Ledger(run_dir),
        seed=5,
        clock=evaluator.clock,
    )


def run(loop: SearchLoop, budget: Budget) -> str:
    """Run the loop; return why it stopped."""
    stops: list[str] = []
    loop.run(budget, LoopEvents(on_stop=stops.append))
    return stops[0]


def test_each_outcome_of_a_generation_becomes_its_record(tmp_path):
    outage = ProposerError("fake outage", Usage(model="fake-model", tokens_in=7, seconds=2.0))
    proposer = FakeProposer(
        [
            fake_source(0),  # g0001: evaluated
            fake_source(1, refuse=True),  # g0002: refused by the checker
            outage,  # g0003: no proposal
            fake_source(2),  # g0004: the evaluator reports a timeout
            fake_source(0).replace("Fake program 0", "A renamed copy"),  # g0005: duplicate
            "",  # g0006: no code
        ]
    )
    timeout = CandidateError(Status.TIMEOUT, "alpha: ran longer than 1 s")
    evaluator = FakeEvaluator({"g0001": 0.02, "g0004": timeout})
    sandbox, checker = FakeSandbox(), FakeChecker()
    loop = make_loop(tmp_path, proposer, evaluator, sandbox, checker)
    assert run(loop, Budget(generations=6)) == "reached generation 6"

    records = Ledger(tmp_path).records
    assert [r.status for r in records] == [
        Status.OK,
        Status.OK,
        Status.REJECTED,
        Status.PROPOSER_ERROR,
        Status.TIMEOUT,
        Status.REJECTED,
        Status.REJECTED,
    ]
    p0, ok, refused, failed, timed_out, duplicate, empty = records
    assert p0.program_id == "g0000-P0" and p0.per_task.keys() == set(FAKE_TASKS)
    assert p0.per_task_delta == dict.fromkeys(FAKE_TASKS, 0.0)
    assert p0.wtl == WTL(wins=0, ties=2, losses=0)
    assert ok.mean_delta == 0.02 and ok.wtl == WTL(wins=2, ties=0, losses=0)
    assert ok.cost_ratio == 1.5 and ok.per_task_delta == dict.fromkeys(FAKE_TASKS, 0.02)
    assert ok.proposer == "fake" and ok.tokens_in == 100 and ok.fingerprint
    assert refused.reason == "no-external-model: refused by the fake checker"
    assert refused.mean_delta is None and refused.source_path == "programs/g0002.py"
    assert all(r.per_task == {} and r.wtl is None for r in (refused, failed, timed_out))
    assert failed.reason == "fake outage" and failed.tokens_in == 7 and failed.source_path is None
    assert timed_out.reason == "alpha: ran longer than 1 s"
    assert duplicate.reason.startswith("novel: near-duplicate of g0001 (similarity 1.000)")
    assert empty.reason == "parse: the reply contains no program" and empty.source_path is None
    # Each record's lesson: what changed and what it did, or why it failed.
    assert ok.lesson == "g0001: fake 1; mean Δ +0.0200 vs P0"
    assert (
        refused.lesson
        == "g0002 tried: fake 2; rejected: no-external-model: refused by the fake checker"
    )
    assert timed_out.lesson == "g0004 tried: fake 4; timeout: alpha: ran longer than 1 s"
    assert failed.lesson == ""  # no proposal, nothing tried
    # Only what passed the checks reached the sandbox and the evaluator.
    assert sandbox.built == ["g0001", "g0004"] and evaluator.evaluated == ["g0001", "g0004"]
    assert len(checker.seen) == 4  # every source but the proposer error's and the empty one


def test_the_proposer_sees_the_ledger_state(tmp_path):
    proposer = FakeProposer([fake_source(0), fake_source(1)])
    loop = make_loop(tmp_path, proposer, FakeEvaluator({"g0001": 0.03, "g0002": -0.01}))
    run(loop, Budget(generations=2))
    first, second = proposer.states
    assert (first.generation, second.generation) == (1, 2)
    assert first.tasks == FAKE_TASKS and first.seed == 5 and not first.views_collapsed
    assert [r.program_id for r in first.history] == ["g0000-P0"]
    assert [p.record.program_id for p in second.frontier] == ["g0001", "g0000-P0"]
    assert second.frontier[0].source == fake_source(0)


def test_the_wall_time_budget_stops_before_the_next_generation(tmp_path):
    clock = FakeClock()
    outcomes = {f"g{g:04d}": 0.01 * g for g in range(1, 6)}
    evaluator = FakeEvaluator(outcomes, clock=clock, seconds=600.0)
    proposer = FakeProposer([fake_source(i) for i in range(5)])
    why = run(make_loop(tmp_path, proposer, evaluator), Budget(5, wall_seconds=1000.0))
    assert why == "wall-time budget of 1000 s spent"
    records = Ledger(tmp_path).records
    # 600 s after generation 1 is within the budget; 1200 s after generation 2 is not.
    assert [r.generation for r in records] == [0, 1, 2]
    assert [r.seconds for r in records[1:]] == [600.0, 600.0]


def test_the_llm_budget_stops_once_the_ledger_has_spent_it(tmp_path):
    outcomes = {f"g{g:04d}": 0.01 * g for g in range(1, 6)}
    proposer = FakeProposer([fake_source(i) for i in range(5)], usd=0.4)
    why = run(make_loop(tmp_path, proposer, FakeEvaluator(outcomes)), Budget(5, llm_usd=1.0))
    assert why == "LLM budget of $1 spent ($1.20)"
    assert Ledger(tmp_path).last_generation == 3


def test_a_resumed_loop_continues_at_the_next_generation(tmp_path):
    outcomes = {f"g{g:04d}": 0.01 * g for g in range(1, 5)}
    sources = [fake_source(i) for i in range(4)]
    run(make_loop(tmp_path, FakeProposer(sources[:2]), FakeEvaluator(outcomes)), Budget(2))
    resumed = FakeProposer(sources[2:])
    assert run(make_loop(tmp_path, resumed, FakeEvaluator(outcomes)), Budget(4)) == (
        "reached generation 4"
    )
    assert [s.generation for s in resumed.states] == [3, 4]
    records = Ledger(tmp_path).records
    assert [r.generation for r in records] == [0, 1, 2, 3, 4]
    assert sum(r.program_id == "g0000-P0" for r in records) == 1
