"""A search opened from its typed config, with no command line: what it records and refuses.

Real packaged tasks (``limit-small``, ``aila_statutes``) and the packaged static encoder
(64-d, real, fast); the structural strategy, which needs no model.
"""

from __future__ import annotations

import json

import pytest

from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.runs.config import RUN_CONFIG_FILE, read_run_config
from embedding_ttc.runs.ledger import Ledger
from embedding_ttc.runs.split import SplitSettings, read_split, split_queries
from embedding_ttc.search.limits import run_limits
from embedding_ttc.search.loop import Budget
from embedding_ttc.search.open import BackendSetup, SearchSetup, open_search
from embedding_ttc.search.strategies import StrategyError
from embedding_ttc.tasks.catalog import load_task

from .specs import run_config, spec

TASKS = ["limit-small", "aila_statutes"]


def test_a_search_opened_from_a_run_config_runs_and_records_it(tmp_path, packaged_datasets):
    run = tmp_path / "run"
    config = run_config(TASKS)
    lines: list[str] = []
    setup = SearchSetup(run_dir=run, data_dir=packaged_datasets, top_k=3)
    with open_search(config, setup, say=lines.append) as loop:
        front = loop.run(Budget(2))
    records = Ledger(run).records
    assert [r.generation for r in records] == [0, 1, 2]
    assert {r.proposer for r in records[1:]} == {"structural"}
    assert front.best is not None
    recorded = read_run_config(run)
    # The limits not given are the defaults, written with the rest.
    assert recorded == config.model_copy(update={"limits": run_limits(None)})
    split = read_split(run)
    assert split is not None and split.settings == config.split and set(split.tasks) == set(TASKS)
    assert lines == []  # a new run: nothing to say
    with open_search(config, setup, say=lines.append) as loop:
        loop.run(Budget(3))
    assert lines == [f"resuming {run}: 3 records, last generation 2"]
    assert [r.generation for r in Ledger(run).records] == [0, 1, 2, 3]


def test_tasks_and_a_split_the_caller_made_are_used_as_given(tmp_path, packaged_datasets):
    tasks = [load_task(name, packaged_datasets) for name in TASKS]
    settings = SplitSettings(validation_share=0.5)
    config = run_config(TASKS, split=settings, seed=3)
    own = split_queries(tasks, 11, settings)  # the caller's cut: another seed than the run's
    setup = SearchSetup(run_dir=tmp_path / "run")  # no data root: the tasks are given
    with open_search(config, setup, tasks=tasks, split=own) as loop:
        loop.run(Budget(1))
        assert loop.evaluator.split == own  # type: ignore[attr-defined]
    assert read_split(tmp_path / "run") == own
    assert own != split_queries(tasks, config.seed, settings)
    record = Ledger(tmp_path / "run").records[1]
    assert set(record.per_task) == set(TASKS)


def test_tasks_or_a_split_that_are_not_the_runs_are_refused_before_anything_is_written(
    tmp_path, packaged_datasets
):
    tasks = [load_task(name, packaged_datasets) for name in TASKS]
    setup = SearchSetup(run_dir=tmp_path / "run")
    reversed_order = run_config(list(reversed(TASKS)))
    with (
        pytest.raises(EmbeddingTTCError, match=r"not the run's .*in its order"),
        open_search(reversed_order, setup, tasks=tasks),
    ):
        pass
    assert not (tmp_path / "run" / RUN_CONFIG_FILE).exists()
    other = split_queries(tasks, 0, SplitSettings(validation_share=0.5))
    with (
        pytest.raises(EmbeddingTTCError, match="split given was cut with"),
        open_search(run_config(TASKS), setup, tasks=tasks, split=other),
    ):
        pass
    with (
        pytest.raises(EmbeddingTTCError, match="split given"),
        open_search(run_config(TASKS, split=None), setup, tasks=tasks, split=other),
    ):
        pass


def test_a_strategys_bad_options_are_refused_before_anything_is_written(
    tmp_path, packaged_datasets
):
    bad = spec("draft", "openai").model_copy(update={"options": {"drafts": "many"}})
    setup = SearchSetup(run_dir=tmp_path / "run", data_dir=packaged_datasets)
    with (
        pytest.raises(StrategyError, match="drafts"),
        open_search(run_config(TASKS, bad), setup),
    ):
        pass
    with (
        pytest.raises(StrategyError, match="structural strategy takes no backend"),
        open_search(
            run_config(TASKS, spec("structural").model_copy(update={"backend": "openai"})), setup
        ),
    ):
        pass
    with (
        pytest.raises(StrategyError, match="edit strategy needs a chat backend"),
        open_search(run_config(TASKS, spec("edit")), setup),
    ):
        pass
    assert not (tmp_path / "run").exists() or not any((tmp_path / "run").iterdir())


def test_a_pick_rule_needs_a_split_and_a_reference(tmp_path, packaged_datasets):
    rule = tmp_path / "rule.json"
    rule.write_text(json.dumps({}))
    setup = SearchSetup(run_dir=tmp_path / "run", data_dir=packaged_datasets, pick_rule=rule)
    with (
        pytest.raises(EmbeddingTTCError, match="--pick-rule needs a split"),
        open_search(run_config(["limit-small"], reference=None), setup),
    ):
        pass


def test_the_setup_refuses_values_out_of_range(tmp_path):
    with pytest.raises(EmbeddingTTCError, match="top_k"):
        SearchSetup(run_dir=tmp_path, top_k=-1)
    with pytest.raises(EmbeddingTTCError, match="threads"):
        BackendSetup(threads=0)
