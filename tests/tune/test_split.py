"""The tune/test cut: seeded, disjoint, recorded once, and refused when it cannot be made."""

from __future__ import annotations

import pytest

from embedding_ttc.tasks.task import RetrievalTask, restrict_queries
from embedding_ttc.tune.split import (
    MIN_TEST_QUERIES,
    MIN_TUNE_QUERIES,
    TuneSplitError,
    record_tune_split,
    split_tune_test,
)


def task(n_queries: int, name: str = "t") -> RetrievalTask:
    ids = [f"q{i}" for i in range(n_queries)]
    return RetrievalTask(
        name=name,
        doc_ids=["d0", "d1"],
        doc_titles=["", ""],
        doc_bodies=["alpha", "beta"],
        query_ids=ids,
        query_texts=[f"text {i}" for i in range(n_queries)],
        qrels={q: {"d0": 1} for q in ids},
    )


def test_the_cut_is_seeded_disjoint_and_whole():
    t = task(60)
    a = split_tune_test(t, "enc", seed=3)
    assert a == split_tune_test(t, "enc", seed=3)
    assert a != split_tune_test(t, "enc", seed=4)
    assert not set(a.tune) & set(a.test)
    assert sorted(a.tune + a.test) == sorted(t.query_ids)
    assert len(a.test) == 30
    assert (a.task, a.encoder) == ("t", "enc")


def test_the_cut_does_not_depend_on_the_file_order():
    t = task(40)
    shuffled = restrict_queries(t, t.query_ids)
    shuffled = RetrievalTask(
        **{
            **shuffled.__dict__,
            "query_ids": shuffled.query_ids[::-1],
            "query_texts": shuffled.query_texts[::-1],
        }
    )
    assert split_tune_test(t, "e", 0) == split_tune_test(shuffled, "e", 0)


def test_the_test_share_sets_the_test_part():
    cut = split_tune_test(task(100), "e", 0, test_share=0.3)
    assert (len(cut.tune), len(cut.test)) == (70, 30)


def test_too_few_judged_queries_are_refused_with_the_counts():
    with pytest.raises(TuneSplitError, match=r"has 20 judged queries; tuning needs at least 26"):
        split_tune_test(task(MIN_TUNE_QUERIES + MIN_TEST_QUERIES - 6), "e", 0)
    with pytest.raises(TuneSplitError, match="lower --test-share"):
        split_tune_test(task(30), "e", 0, test_share=0.9)
    with pytest.raises(TuneSplitError, match="strictly between 0 and 1"):
        split_tune_test(task(30), "e", 0, test_share=1.0)


def test_restricting_keeps_only_the_named_queries_and_their_judgements():
    t = task(40)
    cut = split_tune_test(t, "e", 0)
    tune = restrict_queries(t, cut.tune)
    assert list(tune.query_ids) == [q for q in t.query_ids if q in set(cut.tune)]
    assert set(tune.qrels) == set(cut.tune)
    assert not set(tune.query_texts) & {t.query_texts[t.query_ids.index(q)] for q in cut.test}


def test_a_resumed_run_refuses_another_cut(tmp_path):
    t = task(40)
    record_tune_split(tmp_path, split_tune_test(t, "e", 0))
    record_tune_split(tmp_path, split_tune_test(t, "e", 0))  # the same cut resumes
    assert (tmp_path / "split.json").is_file()
    with pytest.raises(TuneSplitError, match="seed, tune, test differ"):
        record_tune_split(tmp_path, split_tune_test(t, "e", 1))
