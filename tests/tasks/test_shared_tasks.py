"""Every shared task loads, with the counts its STATS.json states; suites name real tasks."""

import json
from pathlib import Path

import pytest

from embedding_ttc.errors import DatasetError, UnknownNameError
from embedding_ttc.tasks.catalog import (
    available_task_names,
    load_task,
    resolve_data_root,
    suite_names,
    suite_tasks,
)

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"
FOLDERS = sorted(p.parent.name for p in SHARED.glob("*/qrels")) if SHARED.exists() else []


def test_shared_datasets_present(shared_datasets: Path):
    assert len(FOLDERS) >= 10


# Without the shared datasets one case stands for them, and the fixture skips it saying why.
@pytest.mark.parametrize("name", sorted(FOLDERS) or ["no-shared-datasets"])
def test_shared_task_matches_its_stats(shared_datasets: Path, name: str):
    stats = json.loads((shared_datasets / name / "STATS.json").read_text())
    task = load_task(name, shared_datasets)
    assert task.n_docs == stats["n_docs"]
    assert task.n_queries == stats.get("n_queries_with_qrels", stats["n_queries"])
    assert task.is_pool == bool(stats.get("pool", False))
    if task.is_pool:
        assert all(set(task.pools[q]) == set(task.qrels[q]) for q in task.query_ids)


def test_suites_name_existing_tasks(shared_datasets: Path):
    known = set(available_task_names(shared_datasets))
    assert {"discovery", "heldout", "scale", "smoke"} <= set(suite_names())
    for suite in suite_names():
        missing = set(suite_tasks(suite)) - known
        assert not missing, f"suite {suite} names unknown tasks {missing}"


def test_unknown_task_and_suite_suggest(shared_datasets: Path):
    with pytest.raises(UnknownNameError, match="Did you mean: scifact"):
        load_task("scifcat", shared_datasets)
    with pytest.raises(UnknownNameError, match="Did you mean: heldout"):
        suite_tasks("held-out")


def test_data_root_resolution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    assert resolve_data_root(tmp_path) == tmp_path
    monkeypatch.setenv("EMBEDDING_TTC_DATA", str(tmp_path))
    assert resolve_data_root() == tmp_path
    monkeypatch.setenv("EMBEDDING_TTC_DATA", str(tmp_path / "missing"))
    with pytest.raises(DatasetError, match="is not a directory"):
        resolve_data_root()


def test_a_query_sample_is_seeded_by_the_task_name_and_restricts_judgements(shared_datasets):
    from embedding_ttc.tasks.task import sample_queries

    task = load_task("birco_wtb", shared_datasets)
    a, b = sample_queries(task, 30), sample_queries(task, 30)
    assert a.query_ids == b.query_ids and a.n_queries == 30
    assert list(a.query_ids) == [q for q in task.query_ids if q in set(a.query_ids)]  # file order
    assert set(a.qrels) == set(a.query_ids) and set(a.pools or {}) == set(a.query_ids)
    texts = dict(zip(task.query_ids, task.query_texts, strict=True))
    assert list(a.query_texts) == [texts[q] for q in a.query_ids]
    assert a.metadata["query_sample"] == 30 and a.doc_ids == task.doc_ids
    assert sample_queries(task, task.n_queries) is task
    with pytest.raises(ValueError, match="at least one query"):
        sample_queries(task, 0)


def test_a_program_search_refuses_transfer_only_tasks(tmp_path):
    from embedding_ttc.cli import main
    from embedding_ttc.errors import EmbeddingTTCError
    from embedding_ttc.tasks.catalog import check_choosable, suite_tasks, transfer_only_tasks

    barred = transfer_only_tasks()
    assert set(suite_tasks("multilingual")) | set(suite_tasks("heldout")) == set(barred)
    assert barred["xquad_th"] == "multilingual" and barred["scifact"] == "heldout"
    assert not set(suite_tasks("discovery")) & set(barred)
    check_choosable(suite_tasks("discovery"), "a program search")
    with pytest.raises(EmbeddingTTCError, match=r"transfer-only tasks: jaquad_ja \(multilingual\)"):
        check_choosable(["aila_statutes", "jaquad_ja"], "a program search")
    code = main(["search", "--suite", "multilingual", "--run-dir", str(tmp_path / "run")])
    assert code != 0 and not (tmp_path / "run" / "ledger.jsonl").exists()
