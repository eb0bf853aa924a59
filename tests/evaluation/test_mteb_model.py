"""The mteb 2.x adapter: mteb's own nDCG@10 of a program equals ours, and mteb writes its files.

The task is built in Python as mteb's own tests build theirs (``mteb.mocks``): an
``AbsTaskRetrieval`` subclass whose ``load_data`` fills ``self.dataset`` with
``RetrievalSplitData``. Nothing is downloaded; the encoder is the packaged all-MiniLM-L6-v2.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from embedding_ttc.encoders.catalog import load_encoder
from embedding_ttc.errors import MissingExtraError
from embedding_ttc.evaluation.evaluate import evaluate
from embedding_ttc.evaluation.mteb_model import MtebSearchModel, search_task
from embedding_ttc.programs.catalog import get_program
from embedding_ttc.tasks.mteb_loader import load_mteb_task

mteb = pytest.importorskip("mteb", minversion="2.0")
from datasets import Dataset  # noqa: E402  (mteb brings datasets)
from mteb.abstasks.retrieval import AbsTaskRetrieval  # noqa: E402
from mteb.abstasks.task_metadata import TaskMetadata  # noqa: E402

TASK_NAME = "EttcInMemoryRetrieval"

CORPUS = [
    ("d01", "Aspirin", "Aspirin thins the blood. It is taken after a heart attack."),
    ("d02", "", "Ibuprofen reduces swelling and pain. Take it with food."),
    ("d03", "Warfarin", "Warfarin is an anticoagulant. Doses are checked with blood tests."),
    ("d04", "", "The heart pumps blood through the arteries. A heart attack blocks one."),
    ("d05", "Bread", "Knead the dough for ten minutes. Let it rise before baking."),
    ("d06", "", "Sourdough uses a starter instead of yeast. It rises slowly overnight."),
    ("d07", "Ovens", "A hot oven gives bread a crisp crust. Steam helps it rise."),
    ("d08", "", "Central banks raise interest rates to slow inflation."),
    ("d09", "Inflation", "Inflation erodes savings. Prices of food and fuel rise."),
    ("d10", "", "Stock markets fell sharply after the rate decision."),
    ("d11", "Cats", "Cats sleep for most of the day. They purr when content."),
    ("d12", "", "Dogs need daily walks. Puppies sleep a lot as well."),
    ("d13", "Tides", "The moon's gravity raises the tides twice a day."),
    ("d14", "", "Swelling of the ankles can follow a long flight."),
]
QUERIES = [
    ("q1", "which drug thins the blood"),
    ("q2", "how to make bread rise"),
    ("q3", "why do central banks raise rates"),
    ("q4", "do cats sleep a lot"),
    ("q5", "what reduces swelling"),
    ("q6", "a query without judgements"),
]
QRELS = {
    "q1": {"d01": 2, "d03": 1, "d04": 0},
    "q2": {"d05": 1, "d06": 1, "d07": 2},
    "q3": {"d08": 2, "d09": 1, "d10": 1},
    "q4": {"d11": 2, "d12": 1},
    "q5": {"d02": 2, "d14": 1},
}


def _metadata() -> TaskMetadata:
    return TaskMetadata(
        name=TASK_NAME,
        description="A small in-memory retrieval task for embedding-ttc's mteb adapter tests.",
        reference=None,
        dataset={"path": "NA", "revision": "NA"},
        type="Retrieval",
        category="t2t",
        modalities=["text"],
        eval_splits=["test"],
        eval_langs=["eng-Latn"],
        main_score="ndcg_at_10",
        date=("2024-01-01", "2024-01-01"),
        domains=[],
        task_subtypes=[],
        license="cc-by-4.0",
        annotations_creators="derived",
        dialect=[],
        sample_creation="created",
        bibtex_citation="",
    )


class InMemoryRetrieval(AbsTaskRetrieval):
    """Fourteen documents on five topics, six queries (one unjudged), graded judgements."""

    metadata = _metadata()

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        if self.data_loaded:
            return
        self.dataset = {
            "default": {
                "test": {
                    "corpus": Dataset.from_list(
                        [{"id": i, "title": t, "text": b} for i, t, b in CORPUS]
                    ),
                    "queries": Dataset.from_list([{"id": i, "text": t} for i, t in QUERIES]),
                    "relevant_docs": {q: dict(d) for q, d in QRELS.items()},
                    "top_ranked": None,
                }
            }
        }
        self.data_loaded = True


@pytest.fixture(scope="module")
def minilm() -> Any:
    return load_encoder("all-MiniLM-L6-v2", device="cpu")


@pytest.fixture()
def our_task(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The same task through the ``mteb:<Name>`` loader, reading a real mteb 2.x task object."""
    monkeypatch.setattr(mteb, "get_task", lambda name: InMemoryRetrieval())
    return load_mteb_task(TASK_NAME)


def _mteb_ndcg(model: MtebSearchModel, cache: Path) -> float:
    result = mteb.evaluate(
        model, InMemoryRetrieval(), cache=mteb.ResultCache(cache), show_progress_bar=False
    )
    (task_result,) = result.task_results
    (scores,) = task_result.scores["test"]
    return float(scores["ndcg_at_10"])


def test_the_loader_reads_a_real_mteb_2_task(our_task: Any) -> None:
    assert our_task.name == TASK_NAME
    assert list(our_task.query_ids) == ["q1", "q2", "q3", "q4", "q5"]  # q6: no judgements
    assert list(our_task.doc_ids) == [d for d, _, _ in CORPUS]
    assert our_task.doc_texts[0] == f"Aspirin {CORPUS[0][2]}"  # title and text, as mteb joins
    assert our_task.metadata["mteb_version"] == mteb.__version__


@pytest.mark.parametrize("program", ["P0", "Rocchio", "SentMaxSim"])
def test_mteb_ndcg_equals_ours(program: str, minilm: Any, our_task: Any, tmp_path: Path) -> None:
    ours = evaluate(get_program(program), our_task, minilm)
    model = MtebSearchModel(minilm, program)
    theirs = _mteb_ndcg(model, tmp_path)
    assert 0.0 < ours.ndcg_at_10 < 1.0  # a ranking with mistakes: the comparison can fail
    assert theirs == round(ours.ndcg_at_10, 5)  # mteb reports five decimals
    (cost,) = model.costs.values()
    assert cost.base_calls == ours.cost.base_calls == len(CORPUS) + 5
    assert cost.program_calls == ours.cost.program_calls
    if program == "SentMaxSim":
        assert cost.program_calls > 0  # it re-encodes sentences through the metered encoder


def test_rankings_are_ours(minilm: Any, our_task: Any) -> None:
    from embedding_ttc.evaluation.evaluate import run_programs

    model = MtebSearchModel(minilm, "Rocchio")
    split = InMemoryRetrieval()
    split.load_data()
    data = split.dataset["default"]["test"]
    model.index(data["corpus"], task_metadata=split.metadata)
    queries = data["queries"].filter(lambda row: row["id"] in QRELS)  # as mteb filters them
    got = model.search(
        queries,
        task_metadata=split.metadata,
        hf_split="test",
        hf_subset="default",
        top_k=5,
        encode_kwargs={},
    )
    (run,) = run_programs([get_program("Rocchio")], our_task, minilm)
    want = {q: dict(zip(ids, scores, strict=True)) for q, ids, scores in run.rankings(5)}
    assert got == want
    assert [list(v) for v in got.values()] == [list(v) for v in want.values()]


def test_result_files_are_written_under_the_program(minilm: Any, tmp_path: Path) -> None:
    model = MtebSearchModel(minilm, "P0")
    ndcg = _mteb_ndcg(model, tmp_path)
    files = list((tmp_path / "results").rglob(f"{TASK_NAME}.json"))
    assert len(files) == 1
    path = files[0]
    assert path.parts[-6:-1] == (
        "results",
        "embedding-ttc__all-MiniLM-L6-v2",
        minilm.info.revision,
        "experiments",
        "program_P0__program_version_1",
    )
    record = json.loads(path.read_text())
    assert record["task_name"] == TASK_NAME
    assert record["scores"]["test"][0]["ndcg_at_10"] == pytest.approx(ndcg)
    meta = model.mteb_model_meta
    assert meta.name == "embedding-ttc/all-MiniLM-L6-v2"
    assert meta.adapted_from == minilm.info.model_id
    assert meta.experiment_kwargs == {"program": "P0", "program_version": 1}


def test_self_hits_follow_the_registered_task(minilm: Any) -> None:
    assert MtebSearchModel(minilm)._self_hits("ArguAna") is True
    assert MtebSearchModel(minilm)._self_hits("SciFact") is False
    assert MtebSearchModel(minilm)._self_hits(TASK_NAME) is False  # unknown to mteb
    assert MtebSearchModel(minilm, exclude_self_hits=True)._self_hits(TASK_NAME) is True


def test_search_task_keeps_pools_and_instructions() -> None:
    corpus = Dataset.from_list([{"id": "a", "title": "T", "text": "x"}, {"id": "b", "text": "y"}])
    queries = Dataset.from_list(
        [{"id": "q", "text": "find", "instruction": "Be brief."}, {"id": "r", "text": "z"}]
    )
    task = search_task("T", corpus, queries, top_ranked={"q": ["b"]})
    assert list(task.query_texts) == ["find Be brief.", "z"]  # mteb appends an instruction
    assert task.pools is not None and dict(task.pools) == {"q": ("b",), "r": ()}
    assert task.doc_texts == ["T x", "y"]
    assert dict(task.qrels) == {}


def test_search_before_index_is_an_error(minilm: Any) -> None:
    with pytest.raises(ValueError, match="index"):
        MtebSearchModel(minilm).search(
            [], task_metadata=_metadata(), hf_split="test", hf_subset="default", top_k=1
        )


def test_missing_or_old_mteb_gives_the_install_hint(
    minilm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mteb", None)
    with pytest.raises(MissingExtraError, match=r"pip install -e '\.\[mteb\]'"):
        MtebSearchModel(minilm)
    old = types.ModuleType("mteb")
    old.__version__ = "1.39.0"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "mteb", old)
    with pytest.raises(MissingExtraError, match=r"mteb>=2 \(found 1\.39\.0\)"):
        MtebSearchModel(minilm)


def test_a_model_loaded_in_python_runs_as_the_registered_one(minilm: Any, tmp_path: Path) -> None:
    from embedding_ttc.encoders.sentence_transformers import SentenceTransformerEncoder

    loaded = minilm.load()  # the SentenceTransformer object of the packaged model
    mine = SentenceTransformerEncoder.from_model(loaded, name="my-minilm")
    model = MtebSearchModel(mine, "P0")
    assert model.mteb_model_meta.name == "embedding-ttc/my-minilm"
    assert model.mteb_model_meta.revision == mine.info.revision
    theirs = _mteb_ndcg(MtebSearchModel(minilm, "P0"), tmp_path / "registered")
    assert _mteb_ndcg(model, tmp_path / "mine") == theirs
