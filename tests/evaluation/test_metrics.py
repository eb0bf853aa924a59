"""nDCG@10 worked out by hand, and checked against pytrec_eval on random runs with ties."""

import math

import numpy as np
import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from embedding_ttc.evaluation.metrics import descending_id_rank, ideal_dcg, ndcg_at_10, top_k
from embedding_ttc.evaluation.ranking import TaskRanker
from embedding_ttc.tasks.task import RetrievalTask


def test_hand_computed_ndcg():
    # ranking grades [0, 2, 1]: DCG = 2/log2(3) + 1/log2(4); ideal [2, 1] = 2 + 1/log2(3)
    expected = (2 / math.log2(3) + 0.5) / (2 + 1 / math.log2(3))
    assert ndcg_at_10([0, 2, 1], ideal_dcg([2, 1, 0])) == pytest.approx(expected)
    assert ndcg_at_10([1, 1], ideal_dcg([0, 0])) == 0.0  # no relevant document: 0
    assert ndcg_at_10([-1, 1], ideal_dcg([1])) == pytest.approx(1 / math.log2(3))  # gain >= 0


def test_ties_break_on_descending_doc_id():
    ids = ["a", "b10", "b9", "c"]
    scores = np.array([1.0, 1.0, 1.0, 0.5])
    order = top_k(scores, descending_id_rank(ids), k=3)
    assert [ids[i] for i in order] == ["b9", "b10", "a"]
    # the tie straddles the cut-off: every tied document competes for the last place
    scores = np.array([0.9, 0.5, 0.5, 0.5])
    assert [ids[i] for i in top_k(scores, descending_id_rank(ids), k=2)] == ["a", "c"]


def pytrec_ndcg(task: RetrievalTask, S: np.ndarray) -> dict[str, float]:
    run = {
        q: {d: float(S[i, j]) for j, d in enumerate(task.doc_ids)}
        for i, q in enumerate(task.query_ids)
    }
    qrels = {q: dict(v) for q, v in task.qrels.items()}
    res = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10"}).evaluate(run)
    return {q: res[q]["ndcg_cut_10"] for q in task.query_ids}


@settings(max_examples=60, deadline=None)
@given(
    n_docs=st.integers(1, 25),
    n_levels=st.integers(1, 4),
    seed=st.integers(0, 10_000),
)
def test_parity_with_pytrec_eval_on_tied_random_runs(n_docs: int, n_levels: int, seed: int):
    rng = np.random.default_rng(seed)
    doc_ids = [f"d{int(x)}" for x in rng.choice(1000, size=n_docs, replace=False)]
    query_ids = ["q1", "q2", "q3"]
    qrels = {
        q: {
            d: int(rng.integers(0, 3))
            for d in rng.choice(doc_ids, size=min(5, n_docs), replace=False)
        }
        for q in query_ids
    }
    task = RetrievalTask(
        name="random",
        doc_ids=doc_ids,
        doc_titles=[""] * n_docs,
        doc_bodies=["x"] * n_docs,
        query_ids=query_ids,
        query_texts=["q"] * 3,
        qrels=qrels,
    )
    S = rng.integers(0, n_levels, size=(3, n_docs)).astype(np.float32) / 4  # many ties
    ours = TaskRanker(task).ndcg(S)
    ref = pytrec_ndcg(task, S)
    np.testing.assert_allclose(ours, [ref[q] for q in query_ids], atol=1e-9)


def test_pool_and_self_hit_exclusion():
    task = RetrievalTask(
        name="pool",
        doc_ids=["a", "b", "c", "q1"],
        doc_titles=[""] * 4,
        doc_bodies=["x"] * 4,
        query_ids=["q1"],
        query_texts=["q"],
        qrels={"q1": {"b": 1, "c": 0}},
        pools={"q1": ["b", "c"]},
    )
    S = np.array([[9.0, 0.1, 0.2, 10.0]], dtype=np.float32)  # a and q1 lie outside the pool
    ranker = TaskRanker(task)
    assert ranker.top(S[0], 0, 10).doc_ids == ["c", "b"]
    assert ranker.ndcg(S)[0] == pytest.approx(1 / math.log2(3))
    flagged = RetrievalTask(**{**task.__dict__, "pools": None, "exclude_self_hits": True})
    assert TaskRanker(flagged).top(S[0], 0, 10).doc_ids == ["a", "c", "b"]
