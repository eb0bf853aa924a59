"""The command line on real data with the default (packaged) encoder."""

import json
from pathlib import Path

import pytest

from embedding_ttc.cli import main
from embedding_ttc.evaluation.records import TaskResult
from embedding_ttc.evaluation.trec import unescape_id

FIELDS = {
    "schema_version",
    "encoder",
    "task",
    "program",
    "comparison",
    "cost_ratio",
    "index_calls",
    "query_calls",
    "encode_seconds",
    "total_seconds",
}


def test_evaluate_json_and_run_directory(packaged_datasets: Path, tmp_path: Path, capsys):
    out = tmp_path / "run"
    code = main(
        [
            "evaluate",
            "--encoder",
            "all-MiniLM-L6-v2",
            "--task",
            "aila_statutes",
            "--program",
            "P0",
            "--json",
            "--out",
            str(out),
            "--no-progress",
            "--data-dir",
            str(packaged_datasets),
        ]
    )
    assert code == 0
    records = json.loads(capsys.readouterr().out)
    assert len(records) == 1 and set(records[0]) >= FIELDS
    rec = records[0]
    cmp = rec["comparison"]
    # measured reference with this packaged model: 0.2018 (published MTEB: 0.2052)
    assert cmp["ndcg_at_10"] == pytest.approx(0.2018, abs=0.001)
    assert cmp["baseline_ndcg_at_10"] == cmp["ndcg_at_10"] and cmp["delta_ndcg_at_10"] == 0.0
    assert cmp["wtl"] == {"wins": 0, "ties": 50, "losses": 0}  # P0 against itself
    assert rec["schema_version"] == 3 and rec["cost_ratio"] == 1.0
    assert (rec["index_calls"], rec["query_calls"]) == (82, 50)

    result = TaskResult.model_validate_json(
        (out / "all-MiniLM-L6-v2" / "aila_statutes" / "P0.json").read_text()
    )
    assert len(result.per_query) == 50
    lines = (out / "all-MiniLM-L6-v2" / "aila_statutes" / "P0.trec").read_text().splitlines()
    assert len(lines) == 50 * 82  # every document of every query (fewer than 100 docs)
    qid, q0, _doc, rank, _score, tag = lines[0].split()
    assert (q0, rank, tag) == ("Q0", "1", "P0") and unescape_id(qid) in result.per_query
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["kind"] == "run_manifest" and manifest["tasks"] == ["aila_statutes"]
    summary = [json.loads(x) for x in (out / "summary.jsonl").read_text().splitlines()]
    assert summary[0]["comparison"] == rec["comparison"]


def test_second_run_is_served_from_the_cache(packaged_datasets: Path, tmp_path: Path, capsys):
    args = [
        "evaluate",
        "--task",
        "legal_summarization",
        "--json",
        "--no-progress",
        "--data-dir",
        str(packaged_datasets),
        "--cache-dir",
        str(tmp_path / "cache"),
    ]
    assert main(args) == 0
    cold = json.loads(capsys.readouterr().out)[0]
    assert main(args) == 0
    warm = json.loads(capsys.readouterr().out)[0]
    assert warm["comparison"] == cold["comparison"]
    assert warm["index_calls"] == cold["index_calls"]  # a hit is still an encoder call
    assert warm["forward_seconds"] == 0.0 < cold["forward_seconds"]


def test_unknown_names_exit_2_with_suggestions(shared_datasets: Path, capsys):
    assert main(["evaluate", "--encoder", "all-minilm", "--task", "scifact"]) == 2
    assert "Did you mean: all-MiniLM-L6-v2" in capsys.readouterr().err
    assert main(["evaluate", "--task", "scifcat", "--data-dir", str(shared_datasets)]) == 2
    assert "Did you mean: scifact" in capsys.readouterr().err
    assert main(["evaluate", "--suite", "smok"]) == 2
    assert "Did you mean: smoke" in capsys.readouterr().err
    assert main(["evaluate", "--program", "P1", "--task", "scifact"]) == 2
    assert "unknown program 'P1'" in capsys.readouterr().err


def test_missing_data_dir_is_named(tmp_path: Path, capsys):
    assert main(["evaluate", "--task", "scifact", "--data-dir", str(tmp_path / "nope")]) == 2
    assert "is not a directory" in capsys.readouterr().err


def test_encoders_json_lists_runnable_encoders(capsys):
    assert main(["encoders", "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    by_name = {r["name"]: r for r in records}
    assert {"name", "family", "dim", "views"} <= set(by_name["all-MiniLM-L6-v2"])
    assert by_name["all-MiniLM-L6-v2"]["dim"] == 384 and by_name["all-MiniLM-L6-v2"]["collapsed"]
    assert any(not r["collapsed"] for r in records), "a two-view encoder must run here"
    assert "jina-embeddings-v3" not in by_name  # needs the network


def test_tasks_json(shared_datasets: Path, capsys):
    assert main(["tasks", "--json", "--data-dir", str(shared_datasets)]) == 0
    listing = json.loads(capsys.readouterr().out)
    by_name = {t["task"]: t for t in listing["tasks"]}
    assert {"scifact", "birco_wtb", "lemb_passkey", "lemb_needle"} <= set(by_name)
    assert set(listing["suites"]["smoke"]["tasks"]) <= set(by_name)
    assert set(listing["suites"]["quickstart"]["tasks"]) <= set(by_name)
    # every shared task is read from the data root; the packaged copies stay shadowed
    assert by_name["aila_statutes"]["origin"] == "data root"
    assert by_name["aila_statutes"]["path"] == str(shared_datasets / "aila_statutes")
    assert by_name["lemb_passkey"]["origin"] == "generated"
    assert listing["malformed"] == [] and listing["unavailable"] == []


def _task_folder(folder: Path, corpus: str | None, queries: str | None) -> None:
    (folder / "qrels").mkdir(parents=True)
    if corpus is not None:
        (folder / "corpus.jsonl").write_text(corpus)
    if queries is not None:
        (folder / "queries.jsonl").write_text(queries)
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")


def test_tasks_lists_malformed_folders_beside_good_and_packaged_ones(tmp_path: Path, capsys):
    _task_folder(
        tmp_path / "good", '{"_id": "d1", "text": "a cat"}\n', '{"_id": "q1", "text": "cat"}\n'
    )
    _task_folder(tmp_path / "bad", "{not json\n", '{"_id": "q1", "text": "cat"}\n')
    _task_folder(tmp_path / "noqueries", '{"_id": "d1", "text": "a cat"}\n', None)
    (tmp_path / "notes").mkdir()  # not a task folder: not listed
    assert main(["tasks", "--json", "--data-dir", str(tmp_path)]) == 0
    listing = json.loads(capsys.readouterr().out)
    origins = {t["task"]: t["origin"] for t in listing["tasks"]}
    assert origins == {
        "good": "data root",
        "aila_statutes": "packaged",
        "legal_summarization": "packaged",
        "limit-small": "packaged",
    }
    malformed = {t["task"]: t for t in listing["malformed"]}
    assert set(malformed) == {"bad", "noqueries"}
    assert "corpus.jsonl:1: not valid JSON" in malformed["bad"]["error"]
    assert "has no queries.jsonl" in malformed["noqueries"]["error"]
    assert malformed["bad"]["path"] == str(tmp_path / "bad")
    unavailable = {t["task"]: t["error"] for t in listing["unavailable"]}
    assert "need the haystack task folder" in unavailable["lemb_needle"]  # generated, no source
    assert main(["tasks", "--data-dir", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "good" in printed and "malformed bad" in printed and "malformed noqueries" in printed
    assert "packaged" in printed and "unavailable lemb_needle" in printed


def test_tasks_with_no_data_root_lists_the_packaged_tasks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
):
    from embedding_ttc.tasks import catalog

    monkeypatch.delenv("EMBEDDING_TTC_DATA", raising=False)
    monkeypatch.setattr(catalog, "_shared_candidates", lambda: [])
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "empty"))
    assert main(["tasks", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert listing["data_dir"] is None and listing["malformed"] == []
    packaged = [t["task"] for t in listing["tasks"] if t["origin"] == "packaged"]
    assert packaged == ["aila_statutes", "legal_summarization", "limit-small"]
    assert {t["task"] for t in listing["unavailable"]} == {"lemb_passkey", "lemb_needle"}
    assert main(["tasks"]) == 0
    assert "no data root: packaged tasks only" in capsys.readouterr().out


def test_sigterm_inside_a_command_is_an_interruption_and_the_handler_is_restored():
    import os
    import signal
    import time

    from embedding_ttc.cli.common import terminate_as_interrupt

    before = signal.getsignal(signal.SIGTERM)
    finished = []
    with pytest.raises(KeyboardInterrupt), terminate_as_interrupt():
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:  # the handler runs at the next bytecode
                pass
        finally:
            finished.append("finally ran")
    assert finished == ["finally ran"]
    assert signal.getsignal(signal.SIGTERM) == before


def test_staged_progress_keeps_one_bar_per_stage() -> None:
    from embedding_ttc.cli.common import stage_progress, staged

    class RecordingProgress:  # rich's Progress, as far as staged() uses it
        def __init__(self) -> None:
            self.tasks: dict[int, dict[str, object]] = {}

        def add_task(self, description: str, total: float | None) -> int:
            self.tasks[len(self.tasks)] = {"description": description, "total": total}
            return len(self.tasks) - 1

        def update(self, task: int, completed: int, total: float | None) -> None:
            self.tasks[task].update(completed=completed, total=total)

    progress = RecordingProgress()
    update = staged(progress)
    update("encode", 1, 4)
    update("encode", 3, 4)
    update("write", 2, 0)  # total unknown
    assert progress.tasks == {
        0: {"description": "encode", "total": 4, "completed": 3},
        1: {"description": "write", "total": None, "completed": 2},
    }
    with stage_progress(False) as off:
        assert off is None
    with stage_progress(True) as on:
        assert on is not None
        on("encode", 1, 2)
