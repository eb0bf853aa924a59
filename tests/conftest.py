"""Shared fixtures: the real tasks' folders, a tiny in-test task, an isolated cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from embedding_ttc.programs.primitives.tokenizers import DEFAULT_TOKENIZER, TOKENIZER_ENV
from embedding_ttc.tasks.task import RetrievalTask

from shared_data import copy_packaged_tasks, require_shared

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def shared_datasets() -> Path:
    """The real tasks in ../shared/datasets: skipped without them, failed so under ``CI``."""
    return require_shared()


@pytest.fixture(scope="session")
def packaged_datasets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data root holding a copy of the packaged tasks (the same data as their shared folders)."""
    return copy_packaged_tasks(tmp_path_factory.mktemp("packaged-datasets"))


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Never touch the user's embedding cache from tests."""
    monkeypatch.setenv("EMBEDDING_TTC_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.fixture(autouse=True)
def _isolated_tokenizer(monkeypatch: pytest.MonkeyPatch):
    """A test that runs the CLI with ``--tokenizer`` (which sets the variable for the process
    and its children) leaves the tokenizer of the tests after it as it found it."""
    monkeypatch.setenv(TOKENIZER_ENV, DEFAULT_TOKENIZER)  # records the value to restore
    monkeypatch.delenv(TOKENIZER_ENV)  # the tests run on the default


@pytest.fixture()
def tiny_task() -> RetrievalTask:
    """Three queries over five documents, graded judgements, written out by hand."""
    return RetrievalTask(
        name="tiny",
        doc_ids=["d1", "d2", "d3", "d4", "d5"],
        doc_titles=["", "Cats", "", "", ""],
        doc_bodies=[
            "the cat sat on the mat",
            "cats purr and sleep",
            "stock markets fell sharply",
            "interest rates and inflation",
            "a recipe for bread",
        ],
        query_ids=["q1", "q2", "q3"],
        query_texts=["sleeping cats", "inflation and rates", "baking bread"],
        qrels={"q1": {"d1": 1, "d2": 2}, "q2": {"d4": 1, "d3": 0}, "q3": {"d5": 1}},
    )
