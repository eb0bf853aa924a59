"""A test needing ../shared skips without it, fails so under CI; packaged tasks stand in."""

from pathlib import Path

import pytest

from embedding_ttc.tasks.catalog import load_task
from embedding_ttc.tasks.packaged import PACKAGED_TASKS, load_packaged_task

import shared_data


def test_without_shared_a_test_is_skipped_with_the_reason(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(shared_data, "SHARED_DATASETS", tmp_path / "shared" / "datasets")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"needs the shared retrieval datasets at"):
        shared_data.require_shared()


@pytest.mark.parametrize("value", ["true", "1", "yes"])
def test_without_shared_under_ci_a_test_fails(tmp_path: Path, monkeypatch, value: str):
    monkeypatch.setattr(shared_data, "SHARED_DATASETS", tmp_path / "shared" / "datasets")
    monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.fail.Exception, match=r"CI is set, and CI always has them"):
        shared_data.require_shared("the parity test")


@pytest.mark.parametrize("value", ["", "0", "false"])
def test_ci_set_to_false_is_not_ci(monkeypatch, value: str):
    monkeypatch.setenv("CI", value)
    assert not shared_data.in_ci()


def test_with_shared_its_folder_is_returned(tmp_path: Path, monkeypatch):
    root = tmp_path / "shared" / "datasets"
    root.mkdir(parents=True)
    (root / "INDEX.tsv").write_text("task\n")
    monkeypatch.setattr(shared_data, "SHARED_DATASETS", root)
    monkeypatch.setenv("CI", "true")
    assert shared_data.require_shared() == root


def test_shared_is_looked_for_beside_the_repository_root():
    assert (
        Path(__file__).resolve().parents[1].parent / "shared" / ("datasets")
        == shared_data.SHARED_DATASETS
    )


def test_the_packaged_copy_loads_as_the_packaged_tasks(packaged_datasets: Path):
    assert sorted(p.name for p in packaged_datasets.iterdir()) == sorted(PACKAGED_TASKS)
    for name in PACKAGED_TASKS:
        copied, packaged = load_task(name, packaged_datasets), load_packaged_task(name)
        assert (copied.doc_ids, copied.query_ids) == (packaged.doc_ids, packaged.query_ids)
        assert copied.qrels == packaged.qrels
