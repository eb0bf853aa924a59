"""Extra measures (--metrics): names checked against pytrec_eval, numbers equal to its own."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

from embedding_ttc.errors import UnknownNameError
from embedding_ttc.evaluation.evaluate import evaluate, run_programs
from embedding_ttc.evaluation.measures import (
    UNCUT_DEPTH,
    MeasureError,
    parse_measure,
    parse_measures,
)
from embedding_ttc.evaluation.output import RunDirectory
from embedding_ttc.evaluation.records import summary_row
from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.p0 import P0
from embedding_ttc.tasks.task import RetrievalTask

from fakes import HashingEncoder

MEASURES = ["ndcg_cut_10", "recall_100", "recip_rank", "map", "P_5", "ndcg_cut.20"]


def test_names_depths_and_canonical_spellings():
    measures = parse_measures(["ndcg_cut_10,recall.100", "recip_rank", "map", "recall_100"])
    assert measures.names == ["ndcg_cut_10", "recall_100", "recip_rank", "map"]  # no repeat
    assert [m.depth for m in measures.items] == [10, 100, UNCUT_DEPTH, UNCUT_DEPTH]
    assert measures.depth == UNCUT_DEPTH
    assert parse_measures(["P_5,ndcg_cut_20"]).depth == 20
    assert parse_measure("iprec_at_recall_0.1").name == "iprec_at_recall_0.10"
    assert parse_measure("success.1").depth == 1


@pytest.mark.parametrize(
    "typo, suggestion",
    [("reacll_100", "recall_100"), ("ndgc_cut_10", "ndcg_cut_10"), ("mapp", "map")],
)
def test_a_typo_suggests_the_measure_meant(typo, suggestion):
    with pytest.raises(UnknownNameError, match=f"Did you mean: .*{suggestion}"):
        parse_measures([typo])


@pytest.mark.parametrize(
    "name, message",
    [
        ("P", "family of 9 measures .*e.g. P_10"),
        ("recall", "family of 9 measures"),
        ("ndcg_cut_10.5", "cutoff of ndcg_cut is a positive whole number"),
        ("all_trec", "nickname"),
        ("runid", "not a number"),
        ("", "no measure named"),
    ],
)
def test_names_that_are_not_one_number_are_refused(name, message):
    with pytest.raises(MeasureError, match=message):
        parse_measures([name])


class Noisy:
    """A test program: seeded integer scores, so ties are many and ranks reach deep."""

    name = "Noisy"

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        rng = np.random.default_rng(7)
        return rng.integers(0, 40, size=S.shape).astype(np.float32)


@pytest.fixture()
def wide_task() -> RetrievalTask:
    """Six queries over 300 documents; graded judgements spread over the corpus."""
    rng = np.random.default_rng(3)
    docs = [f"d{i:03d}" for i in range(300)]
    qrels = {}
    for q in range(6):
        picked = rng.choice(300, size=12, replace=False)
        qrels[f"q{q}"] = {docs[j]: int(rng.integers(0, 3)) for j in picked}
    return RetrievalTask(
        name="wide",
        doc_ids=docs,
        doc_titles=[""] * 300,
        doc_bodies=[f"word{i % 17} term{i % 5}" for i in range(300)],
        query_ids=list(qrels),
        query_texts=[f"word{q} term{q}" for q in range(6)],
        qrels=qrels,
    )


def test_measures_equal_pytrec_eval_on_the_whole_ranking(wide_task: RetrievalTask):
    measures = parse_measures(MEASURES)
    result = evaluate(Noisy(), wide_task, HashingEncoder(), measures=measures)
    # pytrec_eval itself, on every document's score (no cut): the same numbers.
    scores = np.random.default_rng(7).integers(0, 40, size=(6, 300)).astype(np.float32)
    run = {
        q: {d: float(scores[i, j]) for j, d in enumerate(wide_task.doc_ids)}
        for i, q in enumerate(wide_task.query_ids)
    }
    qrels = {q: dict(v) for q, v in wide_task.qrels.items()}
    ref = pytrec_eval.RelevanceEvaluator(qrels, set(measures.names)).evaluate(run)
    assert result.metrics_depth == UNCUT_DEPTH
    for name in measures.names:
        mine = result.per_query_metrics[name]
        assert mine == pytest.approx({q: ref[q][name] for q in wide_task.query_ids}), name
        assert result.metrics[name] == pytest.approx(np.mean(list(mine.values())))
    # our own nDCG@10 and pytrec_eval's ndcg_cut_10 agree, ties included
    assert result.per_query == pytest.approx(result.per_query_metrics["ndcg_cut_10"])


def test_the_run_file_is_as_deep_as_the_measures(wide_task: RetrievalTask, tmp_path: Path):
    measures = parse_measures(["P_200", "ndcg_cut_10"])
    run = next(run_programs([Noisy()], wide_task, HashingEncoder(), measures=measures))
    out = RunDirectory(tmp_path)
    out.write(run, summary_row("enc", "wide", run.result, run.result))
    trec = tmp_path / "fake-hashing" / "wide" / "Noisy.trec"
    lines = trec.read_text().splitlines()
    assert len(lines) == 6 * 200
    with open(trec) as fh:
        written = pytrec_eval.parse_run(fh)
    qrels = {q: dict(v) for q, v in wide_task.qrels.items()}
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"P_200"}).evaluate(written)
    assert run.result.per_query_metrics["P_200"] == pytest.approx(
        {q: v["P_200"] for q, v in ref.items()}
    )


def test_without_measures_the_record_has_none(tiny_task: RetrievalTask):
    result = evaluate(P0(), tiny_task, HashingEncoder())
    assert result.metrics == {} and result.per_query_metrics == {}
    assert result.metrics_depth is None
    row = summary_row("enc", "tiny", result, result)
    assert row.metrics == {}
