"""A user's run file as the first stage: reading it, matching its ids, reranking its candidates."""

from __future__ import annotations

import gzip
import hashlib
import math
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

from embedding_ttc.encoders.base import PASSAGE, QUERY
from embedding_ttc.evaluation.evaluate import evaluate, run_programs
from embedding_ttc.evaluation.first_stage_run import load_first_stage_run
from embedding_ttc.evaluation.trec import RunFileError, read_run, split_fields, write_run
from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.p0 import P0
from embedding_ttc.tasks.task import RetrievalTask

from fakes import HashingEncoder

# Ranking every document of q1 (graded 1 and 2) best first: DCG = 2 + 1/log2(3).
IDCG_Q1 = 2 + 1 / math.log2(3)


@pytest.fixture()
def task() -> RetrievalTask:
    """Three queries over five documents, one document id holding a space."""
    return RetrievalTask(
        name="small",
        doc_ids=["d1", "doc 2", "d3", "d4", "d5"],
        doc_titles=[""] * 5,
        doc_bodies=[
            "the cat sat on the mat",
            "cats purr and sleep",
            "stock markets fell sharply",
            "interest rates and inflation",
            "a recipe for bread",
        ],
        query_ids=["q1", "q2", "q3"],
        query_texts=["sleeping cats", "inflation and rates", "baking bread"],
        qrels={"q1": {"d1": 1, "doc 2": 2}, "q2": {"d4": 1, "d3": 0}, "q3": {"d5": 1}},
    )


# q1: "doc 2" percent-encoded as this package writes it, and a document not in the corpus;
# q2: two non-relevant documents, one double-quoted as PyTerrier (pandas) writes it, a tab;
# zz: a query not in the task; q3 is not covered.
RUN = """# a first stage, written by hand
q1 Q0 doc%202 1 3.5 bm25
q1 Q0 ghost 2 3.0 bm25
q2 Q0 d3 1 9 bm25
q2\tQ0\t"d5"\t2\t8\tbm25
zz Q0 d1 1 1 bm25
"""


def write(tmp_path: Path, text: str, name: str = "run.trec") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


class Recorder:
    """A test program: P0's scores, recording the documents each query was handed."""

    name = "Recorder"

    def __init__(self) -> None:
        self.seen: dict[str, set[str]] = {}

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        assert ctx.candidates is not None  # a first-stage run always hands candidates
        for qid, local in zip(ctx.query_ids, ctx.candidates, strict=True):
            self.seen[qid] = {ctx.doc_ids[j] for j in local}
        return S


def test_programs_rerank_exactly_the_runs_candidates(tmp_path: Path, task: RetrievalTask):
    fsr = load_first_stage_run(write(tmp_path, RUN), task)
    assert list(fsr.task.query_ids) == ["q1", "q2"]  # q3 uncovered: excluded
    recorder = Recorder()
    p0, rec = run_programs([P0(), recorder], fsr.task, HashingEncoder(), first_stage_run=fsr)
    assert recorder.seen == {"q1": {"doc 2"}, "q2": {"d3", "d5"}}
    for run in (p0, rec):
        docs = {q: set(ids) for q, ids, _ in run.rankings(100)}
        assert docs == {"q1": {"doc 2"}, "q2": {"d3", "d5"}}
    # q1 ranks "doc 2" (grade 2) alone: 2 / IDCG; q2's candidates are not relevant: 0.
    result = p0.result
    assert result.per_query == pytest.approx({"q1": 2 / IDCG_Q1, "q2": 0.0})
    assert result.ndcg_at_10 == pytest.approx((2 / IDCG_Q1) / 2)
    assert (result.first_stage, result.shortlist) == ("run", None)
    record = result.first_stage_run
    assert record is not None
    assert record.sha256 == hashlib.sha256(RUN.encode()).hexdigest()
    assert (record.lines, record.run_queries, record.covered_queries) == (5, 3, 2)
    assert (record.uncovered_queries, record.unknown_queries, record.unknown_documents) == (1, 1, 1)
    assert result.task.n_queries == 2
    warnings = "\n".join(result.task.warnings)
    assert "document ids not in the corpus: 1 (first 'ghost', line 3)" in warnings
    assert "query ids not in the task: 1 (first 'zz', line 6)" in warnings
    assert "covers 2 of the 3 queries" in warnings and "excluded from every program" in warnings


def test_p0_matches_pytrec_eval_on_the_runs_candidates(tmp_path: Path, task: RetrievalTask):
    run = RUN + "q2 Q0 d4 3 1.0 bm25\nq2 Q0 d1 4 0.5 bm25\n"
    fsr = load_first_stage_run(write(tmp_path, run), task)
    encoder = HashingEncoder()
    result = evaluate(P0(), fsr.task, encoder, first_stage_run=fsr)
    # The same cosine, computed here, over each query's run documents only.
    Q = encoder.encode(list(task.query_texts), view=QUERY)
    D = encoder.encode(task.doc_texts, view=PASSAGE)
    S = Q @ D.T
    cands = {"q1": ["doc 2"], "q2": ["d3", "d5", "d4", "d1"]}
    rows = {q: task.query_ids.index(q) for q in cands}
    cols = {d: i for i, d in enumerate(task.doc_ids)}
    ref_run = {q: {d: float(S[rows[q], cols[d]]) for d in docs} for q, docs in cands.items()}
    qrels = {q: dict(task.qrels[q]) for q in cands}
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10"}).evaluate(ref_run)
    assert result.per_query == pytest.approx({q: v["ndcg_cut_10"] for q, v in ref.items()})
    # With depth 2, q2 keeps its two best-scored run documents (d3, d5): nDCG 0.
    shallow = load_first_stage_run(write(tmp_path, run), task, depth=2)
    assert [len(c) for c in shallow.candidates] == [1, 2]
    again = evaluate(P0(), shallow.task, encoder, first_stage_run=shallow)
    assert again.per_query["q2"] == 0.0 and again.first_stage_run is not None
    assert again.shortlist == again.first_stage_run.depth == 2


def test_candidates_are_ordered_by_score_then_rank(tmp_path: Path, task: RetrievalTask):
    run = "q1 Q0 d3 2 1.0 t\nq1 Q0 d1 1 1.0 t\nq1 Q0 d5 3 7.0 t\nq1 Q0 d4 4 -2 t\n"
    fsr = load_first_stage_run(write(tmp_path, run), task)
    order = [task.doc_ids[i] for i in fsr.candidates[0]]
    assert order == ["d5", "d1", "d3", "d4"]  # d1 and d3 tie on score: rank 1 first
    capped = load_first_stage_run(write(tmp_path, run), task, depth=2)
    assert [task.doc_ids[i] for i in capped.candidates[0]] == ["d5", "d1"]


def test_a_pyterrier_quoted_id_and_our_own_run_file_read_back(tmp_path: Path, task):
    quoted = load_first_stage_run(write(tmp_path, 'q1 Q0 "doc 2" 1 1.0 pyterrier\n'), task)
    ours = tmp_path / "ours.trec"
    write_run(ours, [("q1", ["doc 2", "d1"], [2.0, 1.0])], "P0")
    mine = load_first_stage_run(ours, task)
    assert [task.doc_ids[i] for i in quoted.candidates[0]] == ["doc 2"]
    assert [task.doc_ids[i] for i in mine.candidates[0]] == ["doc 2", "d1"]
    assert split_fields('a "say ""hi""" b') == ["a", 'say "hi"', "b"]


def test_an_id_holding_a_percent_is_taken_as_written(tmp_path: Path, task):
    from dataclasses import replace

    odd = replace(task, doc_ids=["d1", "doc 2", "50%25", "d4", "d5"])
    fsr = load_first_stage_run(write(tmp_path, "q1 Q0 50%25 1 1 t\n"), odd)
    assert [odd.doc_ids[i] for i in fsr.candidates[0]] == ["50%25"]


def test_a_gzipped_run_with_a_byte_order_mark(tmp_path: Path, task):
    body = ("\ufeff" + "q1 Q0 d1 1 1 t\r\n").encode("utf-8")
    path = tmp_path / "run.trec.gz"
    path.write_bytes(gzip.compress(body))
    run = read_run(path)
    assert run.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert [(ln.qid, ln.docid, ln.rank, ln.score) for ln in run.lines] == [("q1", "d1", 1, 1.0)]


@pytest.mark.parametrize(
    "text, message",
    [
        ("q1 Q0 d1 1 1 t\nq1 Q0 d3 1 t\n", r"run\.trec:2: expected 6 fields .* found 5"),
        ("q1 Q0 doc 2 1 1 t\n", r"run\.trec:1: .* found 7; an id holding whitespace"),
        ("\n\nq1 Q0 d1 one 1 t\n", r"run\.trec:3: rank 'one' is not an integer"),
        ("q1 Q0 d1 1 high t\n", r"run\.trec:1: score 'high' is not a number"),
        ("q1 Q0 d1 1 nan t\n", r"run\.trec:1: score 'nan' is not finite"),
        ("q1 Q0 d1 1 1 t\nq2 Q0 d1 1 1 t\nq1 Q0 d1 2 0 t\n", r"run\.trec:3: .*twice.*line 1"),
        ("# only a comment\n\n", r"run\.trec: the run file holds no line"),
    ],
)
def test_malformed_runs_are_named_with_their_line(tmp_path: Path, task, text, message):
    with pytest.raises(RunFileError, match=message):
        load_first_stage_run(write(tmp_path, text), task)


def test_one_document_spelt_two_ways_is_a_duplicate(tmp_path: Path, task):
    text = 'q1 Q0 "doc 2" 1 2 t\nq1 Q0 doc%202 2 1 t\n'
    with pytest.raises(RunFileError, match=r"run\.trec:2: .*'doc 2'.*twice.*first at line 1"):
        load_first_stage_run(write(tmp_path, text), task)


def test_a_run_of_another_task_is_refused(tmp_path: Path, task):
    with pytest.raises(
        RunFileError, match=r"covers none of the 3 queries of task small: .* 1 name a query"
    ):
        load_first_stage_run(write(tmp_path, "301 Q0 d1 1 1 t\n"), task)
    with pytest.raises(
        RunFileError, match=r"of its 2 lines, 0 name a query .* 2 a document not in"
    ):
        load_first_stage_run(write(tmp_path, "q1 Q0 x1 1 1 t\nq2 Q0 x2 1 1 t\n"), task)
    with pytest.raises(RunFileError, match=r"cannot read"):
        load_first_stage_run(tmp_path / "missing.trec", task)


def test_pool_candidates_and_self_hits_bound_the_run(tmp_path: Path, task):
    from dataclasses import replace

    pooled = replace(task, pools={"q1": ["d1", "doc 2"], "q2": ["d4", "d3"], "q3": ["d5"]})
    fsr = load_first_stage_run(write(tmp_path, "q1 Q0 d1 1 2 t\nq1 Q0 d5 2 1 t\n"), pooled)
    assert [pooled.doc_ids[i] for i in fsr.candidates[0]] == ["d1"]
    assert fsr.record.outside_candidates == 1
    selfish = replace(task, doc_ids=["q1", "doc 2", "d3", "d4", "d5"], exclude_self_hits=True)
    fsr = load_first_stage_run(write(tmp_path, "q1 Q0 q1 1 2 t\nq1 Q0 d3 2 1 t\n"), selfish)
    assert [selfish.doc_ids[i] for i in fsr.candidates[0]] == ["d3"]


def test_a_run_and_a_shortlist_exclude_each_other(tmp_path: Path, task):
    fsr = load_first_stage_run(write(tmp_path, RUN), task)
    with pytest.raises(ValueError, match="exclude each other"):
        evaluate(P0(), fsr.task, HashingEncoder(), first_stage_run=fsr, shortlist=2)
    with pytest.raises(ValueError, match="another task"):
        evaluate(P0(), task, HashingEncoder(), first_stage_run=fsr)
    assert np.array_equal(fsr.candidates[1], [2, 4])
