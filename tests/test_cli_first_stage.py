"""``evaluate --first-stage-run`` and ``--metrics`` from the command line, on a task in tmp."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from embedding_ttc.cli import main
from embedding_ttc.evaluation.records import TaskResult


def write_task(root: Path) -> Path:
    """A BEIR folder: four documents (one id with a space), three judged queries."""
    folder = root / "mini"
    (folder / "qrels").mkdir(parents=True)
    corpus = [
        {"_id": "d1", "title": "", "text": "the cat sat on the mat"},
        {"_id": "doc 2", "title": "Cats", "text": "cats purr and sleep"},
        {"_id": "d3", "title": "", "text": "stock markets fell sharply"},
        {"_id": "d4", "title": "", "text": "interest rates and inflation"},
    ]
    queries = [
        {"_id": "q1", "text": "sleeping cats"},
        {"_id": "q2", "text": "inflation and rates"},
        {"_id": "q3", "text": "falling markets"},
    ]
    rows = lambda items: "".join(json.dumps(x) + "\n" for x in items)  # noqa: E731
    (folder / "corpus.jsonl").write_text(rows(corpus), encoding="utf-8")
    (folder / "queries.jsonl").write_text(rows(queries), encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\tdoc 2\t1\nq2\td4\t1\nq3\td3\t1\n", encoding="utf-8"
    )
    return root


RUN = "q1 Q0 doc%202 1 2.0 bm25\nq1 Q0 d3 2 1.0 bm25\nq2 Q0 d4 1 5 bm25\nq2 Q0 d9 2 4 bm25\n"


def evaluate_args(data: Path, *extra: str) -> list[str]:
    return ["evaluate", "--task", "mini", "--data-dir", str(data), "--no-progress", *extra]


def test_first_stage_run_and_metrics(tmp_path: Path, capsys):
    data = write_task(tmp_path / "data")
    run = tmp_path / "bm25.trec"
    run.write_text(RUN, encoding="utf-8")
    out = tmp_path / "out"
    args = ["--first-stage-run", str(run), "--metrics", "recall_100,recip_rank"]
    assert main(evaluate_args(data, *args, "--out", str(out))) == 0
    captured = capsys.readouterr()
    # the uncovered query and the unknown document are said, on stderr (wrapped by rich)
    err = " ".join(captured.err.split())
    assert "covers 2 of the 3 queries" in err and "excluded from every program" in err
    assert "document ids not in the corpus: 1 (first 'd9', line 4)" in err
    (row,) = [json.loads(x) for x in (out / "summary.jsonl").read_text().splitlines()]
    assert row["schema_version"] == 3
    assert set(row["metrics"]) == {"recall_100", "recip_rank"}
    assert row["metrics"]["recall_100"] == 1.0  # each covered query's relevant document is in
    result = TaskResult.model_validate_json(
        (out / "all-MiniLM-L6-v2" / "mini" / "P0.json").read_text()
    )
    assert set(result.per_query) == {"q1", "q2"}
    assert result.first_stage_run is not None
    assert result.first_stage_run.sha256 == hashlib.sha256(RUN.encode()).hexdigest()
    assert result.first_stage_run.path == str(run)
    assert result.per_query_metrics["recip_rank"]["q2"] == 1.0  # its only candidate
    trec = (out / "all-MiniLM-L6-v2" / "mini" / "P0.trec").read_text().splitlines()
    assert sorted(line.split()[2] for line in trec) == ["d3", "d4", "doc%202"]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--metrics", "reacll_100"], "Did you mean: recall_100"),
        (["--first-stage-run", "{run}", "--shortlist", "5"], "exclude each other"),
        (["--depth", "3"], "--depth caps the candidates of a --first-stage-run"),
        (["--first-stage-run", "{run}", "--depth", "0"], "--depth must be positive"),
    ],
)
def test_bad_options_exit_2_with_one_line(tmp_path: Path, capsys, extra, message):
    data = write_task(tmp_path / "data")
    run = tmp_path / "run.trec"
    run.write_text(RUN, encoding="utf-8")
    argv = evaluate_args(data, *(a.replace("{run}", str(run)) for a in extra))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_malformed_run_is_named_with_its_line(tmp_path: Path, capsys):
    data = write_task(tmp_path / "data")
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 d1 1 1 t\nq1 Q0 doc 2 2 0.5 t\n", encoding="utf-8")
    assert main(evaluate_args(data, "--first-stage-run", str(run))) == 2
    assert f"{run}:2: expected 6 fields" in capsys.readouterr().err
