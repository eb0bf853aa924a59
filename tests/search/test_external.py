"""Programs written outside the loop (a peer such as OpenEvolve), judged by the loop itself.

With the honest fakes of ``loop_fakes``: the handed-over source goes through the loop's checker,
novelty test, sandbox and evaluator, and its record names the peer; the loop's own proposer is
never asked. Then one real evaluation on a real task, through the loop
:func:`~embedding_ttc.search.open.open_search` builds from a run's configuration.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from embedding_ttc.programs.outcome import CandidateError, Status
from embedding_ttc.runs.config import read_run_config
from embedding_ttc.runs.frontier import frontier
from embedding_ttc.runs.ledger import Ledger
from embedding_ttc.search.external import HandedOver, evaluate_external, recorded_p0
from embedding_ttc.search.loop import SearchLoop
from embedding_ttc.search.open import SearchSetup, open_search

from .loop_fakes import (
    FakeChecker,
    FakeEvaluator,
    FakeProposer,
    FakeSandbox,
    fake_source,
)
from .specs import run_config, spec


def fake_loop(run_dir: Path, outcomes: dict[str, float | CandidateError]) -> SearchLoop:
    return SearchLoop(
        proposer=FakeProposer(script=[]),
        checker=FakeChecker(),
        sandbox=FakeSandbox(),
        evaluator=FakeEvaluator(outcomes),
        ledger=Ledger(run_dir),
    )


def test_a_handed_over_source_is_the_next_generation_recorded_under_the_peer(tmp_path):
    loop = fake_loop(tmp_path, {"g0001": 0.03})
    record = evaluate_external(loop, fake_source(1), proposer="openevolve", model="qwen")
    records = Ledger(tmp_path).records
    assert [r.program_id for r in records] == ["g0000-P0", "g0001"]
    assert records[0].proposer == "library"  # P0 first, as the loop's run does
    assert record == records[1]
    assert record.status is Status.OK and record.mean_delta == pytest.approx(0.03)
    assert record.proposer == "openevolve" and record.model == "qwen"
    assert (tmp_path / "programs" / "g0001.py").read_text() == fake_source(1)
    assert isinstance(loop.proposer, FakeProposer) and loop.proposer.states == []
    assert loop.evaluator.evaluated == ["g0001"]  # type: ignore[attr-defined]
    assert frontier(records).best is not None and frontier(records).best.program_id == "g0001"


def test_failures_are_records_with_the_loops_reasons(tmp_path):
    crashed = CandidateError(Status.CRASHED, "alpha: ZeroDivisionError")
    loop = fake_loop(tmp_path, {"g0001": 0.01, "g0004": crashed})
    evaluate_external(loop, fake_source(1), proposer="openevolve")
    refused = evaluate_external(loop, fake_source(2, refuse=True), proposer="openevolve")
    again = evaluate_external(loop, fake_source(1), proposer="openevolve")
    failed = evaluate_external(loop, fake_source(3), proposer="openevolve")
    assert refused.status is Status.REJECTED and "refused by the fake checker" in refused.reason
    assert again.status is Status.REJECTED and "near-duplicate of g0001" in again.reason
    assert failed.status is Status.CRASHED and failed.reason == "alpha: ZeroDivisionError"
    assert [r.mean_delta for r in (refused, again, failed)] == [None, None, None]
    assert [r.generation for r in Ledger(tmp_path).records] == [0, 1, 2, 3, 4]


def test_two_processes_on_one_run_directory_number_after_each_other(tmp_path):
    # OpenEvolve evaluates from its controller and from a worker: two loops, one ledger.
    first = fake_loop(tmp_path, {"g0001": 0.01, "g0003": 0.03})
    second = fake_loop(tmp_path, {"g0002": 0.02})
    evaluate_external(first, fake_source(1), proposer="openevolve")
    evaluate_external(second, fake_source(2), proposer="openevolve")
    evaluate_external(first, fake_source(3), proposer="openevolve")
    records = Ledger(tmp_path).records
    assert [r.program_id for r in records] == ["g0000-P0", "g0001", "g0002", "g0003"]
    assert [r.mean_delta for r in records[1:]] == pytest.approx([0.01, 0.02, 0.03])


def test_nothing_handed_over_is_a_proposer_error(tmp_path):
    loop = fake_loop(tmp_path, {})
    loop.proposer = HandedOver("openevolve")
    record = loop.run_generation(1)
    assert record.status is Status.PROPOSER_ERROR
    assert record.reason == "openevolve: no program was handed over"


PEER_PROGRAM = """\
import numpy as np
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows


def program(Q, D, S, ctx):
    # EVOLVE-BLOCK-START
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    lengths = np.log1p(ctx.doc_lengths.astype(np.float32))
    return zscore_rows(S, mask) - 0.05 * lengths[None, :]
    # EVOLVE-BLOCK-END
"""


def test_a_real_evaluation_through_the_loop_search_builds(tmp_path, packaged_datasets):
    run = tmp_path / "run"
    config = run_config(
        ["aila_statutes"], spec("external", peer="openevolve"), objective="reference"
    )
    setup = SearchSetup(run_dir=run, data_dir=packaged_datasets)
    with open_search(config, setup, make_proposer=lambda _: HandedOver("openevolve")) as loop:
        record = evaluate_external(loop, PEER_PROGRAM, proposer="openevolve")
    assert record.status is Status.OK, record.reason
    assert record.proposer == "openevolve" and record.program_id == "g0001"
    outcome = record.per_task["aila_statutes"]
    assert set(outcome.parts) == {"search", "validation"}
    assert outcome.reference is not None
    seen = record.seen_by_proposer("reference")
    search_part = outcome.parts["search"].reference
    assert search_part is not None and seen.mean_delta == pytest.approx(search_part.delta)
    config = read_run_config(run)
    assert config is not None and str(config.proposer) == "openevolve"
    assert config.proposer.strategy == "external" and config.proposer.backend is None
    assert config.reference == "BM25DenseRRF" and config.objective == "reference"
    assert (run / "programs" / "g0001.py").read_text() == PEER_PROGRAM


def test_p0_is_recorded_once_and_read_back(tmp_path):
    loop = fake_loop(tmp_path, {"g0001": 0.01})
    p0 = recorded_p0(loop)
    assert p0.program_id == "g0000-P0" and p0.mean_delta == 0.0
    assert recorded_p0(loop) == p0
    evaluate_external(loop, fake_source(1), proposer="openevolve")
    assert recorded_p0(fake_loop(tmp_path, {})) == p0
    assert [r.program_id for r in Ledger(tmp_path).records] == ["g0000-P0", "g0001"]
    assert loop.evaluator.evaluated == ["g0001"]  # type: ignore[attr-defined]
