"""The validation split: cut once, deterministic and recorded; the evaluator fills each part;
the proposer's inputs hold no validation number."""

from __future__ import annotations

from pathlib import Path

import pytest

from embedding_ttc.encoders.catalog import load_encoder
from embedding_ttc.evaluation.comparison import compare
from embedding_ttc.programs.catalog import get_program
from embedding_ttc.runs.ledger import Ledger
from embedding_ttc.runs.split import (
    SPLIT_FILE,
    SplitError,
    SplitSettings,
    read_split,
    record_split,
    split_queries,
    split_task,
)
from embedding_ttc.search.evaluator import SuiteEvaluator, versus
from embedding_ttc.search.loop import SearchLoop
from embedding_ttc.search.prompts.directives import choose_directive
from embedding_ttc.search.prompts.full import render_prompt
from embedding_ttc.search.prompts.small_model import render_compact_prompt
from embedding_ttc.search.structural.proposer import StructuralProposer
from embedding_ttc.tasks.catalog import load_task
from ledger_records import split_evaluated

from .loop_fakes import FakeChecker, FakeEvaluator, FakeProposer, FakeSandbox

FAST_ENCODER = "tokenlearn-static-64"
IDS = [f"q{i:03d}" for i in range(100)]


def test_split_is_seeded_disjoint_and_about_seventy_thirty():
    settings = SplitSettings()
    cut = split_task(IDS, "task", 0, settings)
    assert len(cut.validation) == 30 and len(cut.search) == 70
    assert sorted(cut.search + cut.validation) == IDS
    # The same seed and name give the same cut whatever the order of the ids.
    assert split_task(list(reversed(IDS)), "task", 0, settings) == cut
    # Another seed or another task name gives another cut.
    assert split_task(IDS, "task", 1, settings) != cut
    assert split_task(IDS, "other", 0, settings) != cut


@pytest.mark.parametrize(("n", "validation"), [(10, 5), (12, 5), (20, 6), (7, 3), (2, 1)])
def test_small_tasks_keep_a_handful_on_each_side(n, validation):
    cut = split_task(IDS[:n], "task", 0, SplitSettings(minimum=5))
    assert len(cut.validation) == validation and len(cut.search) == n - validation


def test_a_task_of_one_query_cannot_be_split():
    with pytest.raises(SplitError, match="1 queries"):
        split_task(IDS[:1], "task", 0, SplitSettings())


def test_split_is_recorded_and_a_resume_must_match(tmp_path: Path, tiny_task):
    split = split_queries([tiny_task], seed=3, settings=SplitSettings(minimum=1))
    record_split(tmp_path, split)
    assert read_split(tmp_path) == split
    record_split(tmp_path, split)  # the same split resumes
    other = split_queries([tiny_task], seed=4, settings=SplitSettings(minimum=1))
    if other != split:
        with pytest.raises(SplitError, match="never changes"):
            record_split(tmp_path, other)
    (tmp_path / SPLIT_FILE).write_text("{not json")
    with pytest.raises(SplitError, match="not a query split"):
        read_split(tmp_path)


def test_evaluator_records_each_part_against_p0_and_the_reference(packaged_datasets):
    task = load_task("aila_statutes", packaged_datasets)
    split = split_queries([task], seed=0, settings=SplitSettings())
    evaluator = SuiteEvaluator(
        [task],
        load_encoder(FAST_ENCODER),
        split=split,
        reference=get_program("BM25DenseRRF"),
    )
    program = get_program("BM25")
    outcome = evaluator.evaluate(program).per_task[task.name]
    result = evaluator._run(program, task).result
    base = evaluator.baseline(task)
    reference = evaluator.reference_result(task)
    assert reference is not None
    cut = split.of(task.name)
    validation = outcome.versus("p0", "validation")
    assert validation is not None
    assert validation.comparison == compare(result, base, cut.validation)
    assert validation.worst_query_delta == min(
        result.per_query[q] - base.per_query[q] for q in cut.validation
    )
    against = outcome.versus("reference", "search")
    assert against is not None and against.comparison == compare(result, reference, cut.search)
    assert outcome.reference is not None
    assert outcome.reference.comparison == compare(result, reference)
    # The whole task is both parts: its Δ is their query-weighted mean.
    n_s, n_v = len(cut.search), len(cut.validation)
    search = outcome.delta("p0", "search")
    assert search is not None
    assert outcome.comparison.delta_ndcg_at_10 == pytest.approx(
        (search * n_s + validation.delta * n_v) / (n_s + n_v)
    )
    # P0's own record has its parts (Δ 0 against itself) and its gap to the reference.
    p0 = evaluator.baseline_per_task()[task.name]
    assert p0.delta("p0", "validation") == 0.0
    assert p0.delta("reference", "all") == pytest.approx(-compare(reference, base).delta_ndcg_at_10)
    # The time outside the encoder, which no cost ratio counts, is recorded for both sides.
    assert outcome.algebra_seconds is not None and outcome.algebra_seconds > 0
    assert outcome.reference_algebra_seconds == reference.timings.algebra_seconds > 0


# Validation numbers no proposer may see: Δ +0.4321 (nDCG@10 0.9321) on every task's
# validation part, which also moves every whole-task mean to (search + 0.4321) / 2; and a
# whole validation task, "gammatask", of Δ +0.3789 (nDCG@10 0.8789), not even its name.
SECRET = ("0.432", "0.932", "gammatask", "0.378", "0.878", "0.328", "0.828")


def _ledger_with_secrets(run_dir: Path) -> Ledger:
    ledger = Ledger(run_dir)
    tasks = ("alpha", "beta")
    for i, search in enumerate((0.0, 0.1234, 0.0567)):
        pid = f"g{i:04d}"
        validation = 0.0 if i == 0 else 0.4321
        record = split_evaluated(
            i,
            pid,
            dict.fromkeys(tasks, search),
            dict.fromkeys(tasks, validation),
            held_aside={"gammatask": 0.0 if i == 0 else 0.3789},
            source_path=f"programs/{pid}.py",
            novelty=f"program {i}",
        )
        ledger.save_source(
            pid, f'"""Program {i}."""\n\n\ndef program(Q, D, S, ctx):\n    return S * {i + 1}\n'
        )
        ledger.append(record)
    return ledger


@pytest.mark.parametrize("objective", ["p0", "reference"])
def test_proposer_inputs_hold_no_validation_number(tmp_path: Path, objective):
    ledger = _ledger_with_secrets(tmp_path)
    loop = SearchLoop(
        proposer=FakeProposer([]),
        checker=FakeChecker(),
        sandbox=FakeSandbox(),
        evaluator=FakeEvaluator(
            {}, task_names=("alpha", "beta", "gammatask"), held_aside=("gammatask",)
        ),
        ledger=ledger,
        objective=objective,
    )
    state = loop.state(3)
    assert state.tasks == ("alpha", "beta")
    texts = {
        "full prompt": render_prompt(state),
        "compact prompt": render_compact_prompt(state, directive=choose_directive(state)),
        "history": repr(state.history),
        "frontier": repr(state.frontier),
    }
    proposal = StructuralProposer(seed=0).propose(state)
    texts["structural proposal"] = f"{proposal.novelty}\n{proposal.hypothesis}\n{proposal.source}"
    # What it does see: the search part, against the objective (the reference sits 0.05
    # above P0 in these records).
    seen = "+0.1234" if objective == "p0" else "+0.0734"
    assert seen in texts["full prompt"] and seen in texts["compact prompt"]
    for name, text in texts.items():
        for secret in SECRET:
            assert secret not in text, f"the {name} shows a validation number ({secret})"
    assert all(
        not d.parts and d.reference is None for r in state.history for d in r.per_task.values()
    )
    # The frontier is ranked by the search part: g0001 first.
    assert state.frontier[0].record.program_id == "g0001"


def test_validation_tasks_are_held_aside_whole_deterministically_and_recorded(tmp_path: Path):
    tasks = [load_task(name, None) for name in ("aila_statutes", "limit-small")]
    settings = SplitSettings(validation_tasks=["limit-small"])
    split = split_queries(tasks, seed=0, settings=settings)
    held = split.of("limit-small")
    assert held.search == [] and held.validation == sorted(tasks[1].query_ids)
    assert split.search_tasks == ["aila_statutes"]
    assert split.of("aila_statutes") == split_task(tasks[0].query_ids, "aila_statutes", 0, settings)
    assert split_queries(tasks, seed=0, settings=settings) == split  # deterministic
    record_split(tmp_path, split)
    recorded = read_split(tmp_path)
    assert recorded is not None and recorded.settings.validation_tasks == ["limit-small"]
    # Another choice of validation tasks is another split: a resume refuses it.
    with pytest.raises(SplitError, match="never changes"):
        record_split(tmp_path, split_queries(tasks, seed=0, settings=SplitSettings()))
    with pytest.raises(SplitError, match="not among the run's tasks"):
        split_queries(tasks, 0, SplitSettings(validation_tasks=["scifact"]))
    with pytest.raises(SplitError, match="every task is a validation task"):
        split_queries(tasks, 0, SplitSettings(validation_tasks=["aila_statutes", "limit-small"]))


def test_a_validation_task_has_only_its_validation_part_and_its_deep_losses_counted():
    tasks = [load_task(name, None) for name in ("aila_statutes", "limit-small")]
    split = split_queries(tasks, 0, SplitSettings(validation_tasks=["limit-small"]))
    evaluator = SuiteEvaluator(
        tasks, load_encoder(FAST_ENCODER), split=split, reference=get_program("BM25DenseRRF")
    )
    assert evaluator.seen_task_names == ("aila_statutes",)
    program = get_program("BM25")
    score = evaluator.evaluate(program)
    held = score.per_task["limit-small"]
    assert set(held.parts) == {"validation"}
    result = evaluator._run(program, tasks[1]).result
    base = evaluator.baseline(tasks[1])
    whole = held.versus("p0", "validation")
    assert whole is not None and whole.comparison == compare(
        result, base, split.of("limit-small").validation
    )
    deep = sum(result.per_query[q] - base.per_query[q] < -0.5 for q in base.per_query)
    assert whole.deep_losses == deep
    # The other way round (P0 against BM25 on LIMIT) many queries lose deeply.
    reverse = versus(base, result)
    losses = sum(base.per_query[q] - result.per_query[q] < -0.5 for q in base.per_query)
    assert reverse.deep_losses == losses and losses > 100
    assert set(score.per_task["aila_statutes"].parts) == {"search", "validation"}
