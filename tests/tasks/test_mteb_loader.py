"""MTEB loading: the pure conversion, both mteb layouts (with a fake module), and its errors."""

from __future__ import annotations

import sys
import types
import warnings
from collections.abc import Callable
from typing import Any

import pytest

from embedding_ttc.errors import DatasetError, MissingExtraError, UnknownNameError
from embedding_ttc.tasks.mteb_loader import load_mteb_task, mteb_to_task, queries_from_dataset

# One split shaped exactly like mteb 1.x's ``task.corpus[split]``, ``task.queries[split]`` and
# ``task.relevant_docs[split]`` (mteb 1.12 keeps corpus entries as title/text dicts).
CORPUS = {
    "doc-a": {"title": "Aspirin", "text": "Aspirin thins the blood."},
    "doc-b": {"title": "", "text": "Ibuprofen reduces swelling."},
    "q2": {"title": "Self", "text": "A document whose id equals a query id (ArguAna style)."},
}
QUERIES = {
    "q1": "what thins the blood",
    "q2": "what reduces swelling",
    "q3": "a query nobody judged",
}
QRELS = {
    "q1": {"doc-a": 1, "doc-b": 0},
    "q2": {"doc-b": 2, "q2": 1},
}


def test_conversion_keeps_ids_order_and_grades() -> None:
    task = mteb_to_task("TinyRetrieval", CORPUS, QUERIES, QRELS, False)
    assert task.name == "TinyRetrieval"
    assert task.source == "mteb"
    assert list(task.doc_ids) == ["doc-a", "doc-b", "q2"]
    assert list(task.doc_titles) == ["Aspirin", "", "Self"]
    assert list(task.doc_bodies) == [
        "Aspirin thins the blood.",
        "Ibuprofen reduces swelling.",
        "A document whose id equals a query id (ArguAna style).",
    ]
    assert list(task.query_ids) == ["q1", "q2"]  # q3 has no judgements: MTEB drops it
    assert list(task.query_texts) == ["what thins the blood", "what reduces swelling"]
    assert {q: dict(d) for q, d in task.qrels.items()} == {
        "q1": {"doc-a": 1, "doc-b": 0},
        "q2": {"doc-b": 2, "q2": 1},
    }
    assert all(type(g) is int for d in task.qrels.values() for g in d.values())
    assert task.pools is None
    assert task.exclude_self_hits is False
    assert task.warnings == ()


def test_ignore_identical_ids_becomes_exclude_self_hits() -> None:
    assert mteb_to_task("ArguAna", CORPUS, QUERIES, QRELS, True).exclude_self_hits is True
    assert mteb_to_task("ArguAna", CORPUS, QUERIES, QRELS).exclude_self_hits is False


def test_float_and_string_scores_become_ints() -> None:
    qrels: dict[str, dict[str, Any]] = {"q1": {"doc-a": 1.0, "doc-b": "0"}, "q2": {"doc-b": 1.6}}
    task = mteb_to_task("T", CORPUS, QUERIES, qrels)
    assert dict(task.qrels["q1"]) == {"doc-a": 1, "doc-b": 0}
    assert dict(task.qrels["q2"]) == {"doc-b": 2}
    assert all(type(g) is int for d in task.qrels.values() for g in d.values())
    assert any("rounded" in w for w in task.warnings)


def test_joined_string_corpus_of_mteb_1_39() -> None:
    corpus = {"d1": "Title Body text", "d2": " Body without title"}
    task = mteb_to_task("T", corpus, {"q": "x"}, {"q": {"d1": 1}})
    assert list(task.doc_titles) == ["", ""]
    assert list(task.doc_bodies) == ["Title Body text", " Body without title"]
    assert task.doc_texts == ["Title Body text", "Body without title"]


def test_non_string_ids_become_strings() -> None:
    corpus: dict[Any, Any] = {1: {"title": "", "text": "t"}}
    queries: dict[Any, Any] = {7: "q"}
    qrels: dict[Any, Any] = {7: {1: 1}}
    task = mteb_to_task("T", corpus, queries, qrels)
    assert list(task.doc_ids) == ["1"]
    assert list(task.query_ids) == ["7"]
    assert dict(task.qrels["7"]) == {"1": 1}


def test_conversation_queries_are_joined_like_mteb() -> None:
    queries = {
        "q1": ["hello", "what thins the blood"],
        "q2": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yes?"}],
    }
    task = mteb_to_task("T", CORPUS, queries, QRELS)
    assert list(task.query_texts) == ["hello; what thins the blood", "user: hi; assistant: yes?"]


@pytest.mark.parametrize(
    "rows",
    [
        [{"id": "q1", "text": "find aspirin", "instruction": "Prefer reviews."}],
        [{"id": "q1", "text": ["hello", "what thins the blood"], "instruction": "Be brief."}],
        [
            {
                "id": "q1",
                "text": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "?"}],
                "instruction": "Answer.",
            }
        ],
        [{"id": "q1", "text": "plain"}, {"id": "q2", "text": "other"}],
    ],
    ids=["instruction", "conversation", "roles", "plain"],
)
def test_query_texts_are_those_mteb_encodes(rows: list[dict[str, Any]]) -> None:
    # The reference is mteb 2.x's own function for the text a retrieval model reads.
    pytest.importorskip("mteb", minversion="2.0")
    from datasets import Dataset
    from mteb._create_dataloaders import _retrieval_texts
    from mteb.types import PromptType

    dataset = Dataset.from_list(rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # mteb warns about role-less turns
        want = _retrieval_texts(dataset, PromptType.query)
    assert list(queries_from_dataset(dataset).values()) == want


def test_dropped_and_dangling_judgements_are_counted() -> None:
    qrels = {"q1": {"doc-a": 1, "missing-doc": 1}, "q-no-text": {"doc-a": 1}, "q2": {}}
    task = mteb_to_task("T", CORPUS, QUERIES, qrels)
    assert list(task.query_ids) == ["q1"]
    assert dict(task.qrels["q1"]) == {"doc-a": 1, "missing-doc": 1}  # kept, as MTEB does
    assert any("1 judged queries have no text" in w for w in task.warnings)
    assert any("1 judgements name documents missing" in w for w in task.warnings)


def test_top_ranked_becomes_pools() -> None:
    top = {"q1": ["doc-a", "doc-b"]}
    task = mteb_to_task("T", CORPUS, QUERIES, QRELS, top_ranked=top)
    assert task.pools is not None
    assert list(task.pools["q1"]) == ["doc-a", "doc-b"]
    assert list(task.pools["q2"]) == []
    assert any("no candidate list" in w for w in task.warnings)


def test_no_judged_query_is_an_error() -> None:
    with pytest.raises(DatasetError, match="no query has relevance judgements"):
        mteb_to_task("T", CORPUS, QUERIES, {"q9": {"doc-a": 1}})


def test_bad_corpus_value_is_an_error() -> None:
    with pytest.raises(DatasetError, match="corpus value"):
        mteb_to_task("T", {"d": 3}, QUERIES, QRELS)


# -- load_mteb_task ---------------------------------------------------------------------------


def test_missing_mteb_raises_missing_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mteb", None)  # makes ``import mteb`` fail
    with pytest.raises(MissingExtraError) as info:
        load_mteb_task("SciFact")
    assert info.value.package == "mteb"
    assert info.value.extra == "mteb"
    assert "pip install -e '.[mteb]'" in str(info.value)
    assert "Loading MTEB tasks by name" in str(info.value)


class _Metadata:
    def __init__(self, name: str, eval_splits: list[str]) -> None:
        self.name = name
        self.type = "Retrieval"
        self.eval_splits = eval_splits
        self.main_score = "ndcg_at_10"
        self.dataset = {"path": f"mteb/{name.lower()}", "revision": "abc123"}


class _FakeDataset(list[dict[str, Any]]):
    """Iterates rows like ``datasets.Dataset`` and names its columns."""

    @property
    def column_names(self) -> list[str]:
        return list(self[0]) if self else []


def _v1_task(name: str, splits: list[str], *, ignore: bool = False) -> Any:
    class Task:
        ignore_identical_ids = ignore
        metadata = _Metadata(name, splits)

        def load_data(self, **kwargs: Any) -> None:
            self.corpus = {s: dict(CORPUS) for s in splits}
            self.queries = {s: dict(QUERIES) for s in splits}
            self.relevant_docs = {s: dict(QRELS) for s in splits}

    return Task()


def _v2_task(name: str, *, ignore: bool = False) -> Any:
    class Task:
        ignore_identical_ids = ignore
        metadata = _Metadata(name, ["test"])

        def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
            corpus = _FakeDataset(
                {"id": k, "title": v["title"], "text": v["text"]} for k, v in CORPUS.items()
            )
            queries = _FakeDataset(
                {"id": k, "text": v, "instruction": "Find medicine." if k == "q2" else None}
                for k, v in QUERIES.items()
            )
            self.dataset = {
                "default": {
                    "test": {
                        "corpus": corpus,
                        "queries": queries,
                        "relevant_docs": QRELS,
                        "top_ranked": None,
                    }
                }
            }

    return Task()


def _install_fake_mteb(monkeypatch: pytest.MonkeyPatch, get_task: Callable[[str], Any]) -> None:
    module = types.ModuleType("mteb")
    module.get_task = get_task  # type: ignore[attr-defined]
    module.__version__ = "0.0-fake"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "mteb", module)


def test_mteb_1x_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    _install_fake_mteb(monkeypatch, lambda name: _v1_task(name, ["test"], ignore=True))
    task = load_mteb_task("ArguAna")
    assert task.name == "ArguAna"
    assert task.exclude_self_hits is True
    assert list(task.query_ids) == ["q1", "q2"]
    assert task.metadata["split"] == "test"
    assert task.metadata["dataset_revision"] == "abc123"
    assert task.metadata["mteb_version"] == "0.0-fake"


def test_mteb_2x_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    _install_fake_mteb(monkeypatch, lambda name: _v2_task(name))
    task = load_mteb_task("SciFact")
    assert task.exclude_self_hits is False
    assert list(task.doc_ids) == ["doc-a", "doc-b", "q2"]
    assert list(task.doc_titles) == ["Aspirin", "", "Self"]
    assert list(task.query_texts) == [
        "what thins the blood",
        "what reduces swelling Find medicine.",
    ]
    assert task.metadata["subset"] == "default"


def test_several_splits_need_a_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    splits = ["test_256", "test_512"]
    _install_fake_mteb(monkeypatch, lambda name: _v1_task(name, splits))
    with pytest.raises(DatasetError, match="test_256, test_512"):
        load_mteb_task("LEMBPasskeyRetrieval")
    task = load_mteb_task("LEMBPasskeyRetrieval", split="test_512")
    assert task.metadata["split"] == "test_512"
    with pytest.raises(DatasetError, match="no split 'test_9'"):
        load_mteb_task("LEMBPasskeyRetrieval", split="test_9")


def test_unknown_task_name(monkeypatch: pytest.MonkeyPatch) -> None:
    def get_task(name: str) -> Any:
        raise KeyError(f"KeyError: '{name}' not found. Did you mean: 'SciFact'?")

    _install_fake_mteb(monkeypatch, get_task)
    with pytest.raises(UnknownNameError, match="SciFact"):
        load_mteb_task("SciFakt")


HubError = type("HubError", (Exception,), {"__module__": "huggingface_hub.errors"})


@pytest.mark.parametrize(
    "error",
    [
        ConnectionError("Failed to resolve 'huggingface.co'"),
        HubError("offline mode is enabled"),
    ],
)
def test_offline_download_raises_dataset_error(
    monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    task = _v1_task("SciFact", ["test"])

    def load_data(**kwargs: Any) -> None:
        try:
            raise error
        except Exception as inner:  # wrapped, as datasets wraps hub errors
            raise RuntimeError("could not load dataset") from inner

    task.load_data = load_data
    _install_fake_mteb(monkeypatch, lambda name: task)
    with pytest.raises(DatasetError) as info:
        load_mteb_task("SciFact")
    message = str(info.value)
    assert "Hugging Face hub" in message
    assert "network access" in message
    assert "--data-dir" in message
    assert "BEIR" in message


def test_other_loading_errors_propagate(monkeypatch: pytest.MonkeyPatch) -> None:
    task = _v1_task("SciFact", ["test"])

    def load_data(**kwargs: Any) -> None:
        raise ValueError("a bug, not the network")

    task.load_data = load_data
    _install_fake_mteb(monkeypatch, lambda name: task)
    with pytest.raises(ValueError, match="a bug"):
        load_mteb_task("SciFact")


def test_non_retrieval_task_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    task = _v1_task("Banking77Classification", ["test"])
    task.metadata.type = "Classification"
    _install_fake_mteb(monkeypatch, lambda name: task)
    with pytest.raises(DatasetError, match="not a retrieval task"):
        load_mteb_task("Banking77Classification")
