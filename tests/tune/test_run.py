"""A whole tune run: the test queries reach no choice, pick.json names what to deploy, and the
index built from the run serves the scores ``evaluate`` gives the pick."""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ranx", reason="the tune extra (ranx) is not installed")

from embedding_ttc.deploy.corpus import Document
from embedding_ttc.deploy.index import Index
from embedding_ttc.deploy.reranker import Reranker
from embedding_ttc.encoders.cache import CachedEncoder
from embedding_ttc.encoders.catalog import load_encoder
from embedding_ttc.evaluation.evaluate import run_programs
from embedding_ttc.programs.catalog import get_program
from embedding_ttc.search.open import SearchSetup
from embedding_ttc.tasks.beir import load_beir_folder
from embedding_ttc.tasks.catalog import packaged_folder
from embedding_ttc.tasks.task import restrict_queries
from embedding_ttc.tune.config import TaskSource, TuneConfig
from embedding_ttc.tune.deploy import deployment
from embedding_ttc.tune.rule import TuneRule
from embedding_ttc.tune.run import TuneSetup, run_tune

pytestmark = pytest.mark.slow

ENCODER = "tokenlearn-static-64"


def is_time(key: str) -> bool:
    """A field that holds a measured time (it differs between any two runs)."""
    return "seconds" in key or key == "slowdown"


def beir_copy(target: Path, *, perturb_test: list[str] | None = None) -> Path:
    """aila_statutes as a user's BEIR folder; ``perturb_test``: those queries' texts and
    judgements changed."""
    source = packaged_folder("aila_statutes")
    target.mkdir(parents=True)
    (target / "qrels").mkdir()
    with gzip.open(source / "corpus.jsonl.gz", "rt", encoding="utf-8") as f:
        (target / "corpus.jsonl").write_text(f.read(), encoding="utf-8")
    changed = set(perturb_test or [])
    with gzip.open(source / "queries.jsonl.gz", "rt", encoding="utf-8") as f:
        lines = []
        for line in f:
            q = json.loads(line)
            if q["_id"] in changed:
                q["text"] = "entirely different words about taxation " + q["text"]
            lines.append(json.dumps(q))
    (target / "queries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    docs = [json.loads(x)["_id"] for x in (target / "corpus.jsonl").read_text().splitlines()]
    with gzip.open(source / "qrels" / "test.tsv.gz", "rt", encoding="utf-8") as f:
        rows = f.read().splitlines()
    out = [rows[0]]
    for row in rows[1:]:
        qid, did, grade = row.split("\t")
        if qid in changed:  # judge another document relevant
            did = docs[(docs.index(did) + 7) % len(docs)]
        out.append("\t".join((qid, did, grade)))
    (target / "qrels" / "test.tsv").write_text("\n".join(out) + "\n", encoding="utf-8")
    return target


def config(folder: Path) -> TuneConfig:
    return TuneConfig(
        task=TaskSource(kind="beir", name=folder.name, path=str(folder)),
        encoder=ENCODER,
        generations=2,
        finalists=2,
        # Served times differ from run to run; a bar no program misses keeps the two runs'
        # picks comparable on the numbers that are not times.
        rule=TuneRule(max_slowdown=1000.0),
    )


def untimed(value):
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if not is_time(k)}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def choices(run_dir: Path) -> dict[str, object]:
    """Every record a choice is made from, and the choice, without the times."""
    out: dict[str, object] = {}
    for name in ("fusion.json", "candidates.json", "pick.json", "pick-rule.json"):
        out[name] = untimed(json.loads((run_dir / name).read_text(encoding="utf-8")))
    ledger = (run_dir / "search" / "ledger.jsonl").read_text(encoding="utf-8").splitlines()
    out["ledger"] = [untimed(json.loads(line)) for line in ledger]
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("tune")
    cache = root / "cache"
    original = beir_copy(root / "a" / "mytask")
    first = TuneSetup(SearchSetup(run_dir=root / "run-a", cache_dir=cache))
    pick, _ = run_tune(config(original), first)
    split = json.loads((first.run_dir / "split.json").read_text(encoding="utf-8"))
    perturbed = beir_copy(root / "b" / "mytask", perturb_test=split["test"])
    second = TuneSetup(SearchSetup(run_dir=root / "run-b", cache_dir=cache))
    run_tune(config(perturbed), second)
    return original, first, second, pick


def test_no_test_query_reaches_a_choice(runs):
    _, first, second, _ = runs
    a, b = choices(first.run_dir), choices(second.run_dir)
    assert a.keys() == b.keys()
    for name in a:
        assert a[name] == b[name], name
    # ... and the report, which reads the test queries, does see the change
    report_a = json.loads((first.run_dir / "report" / "report.json").read_text())
    report_b = json.loads((second.run_dir / "report" / "report.json").read_text())
    assert report_a["rows"] != report_b["rows"]


def test_the_split_and_pick_records(runs):
    _, first, _, pick = runs
    split = json.loads((first.run_dir / "split.json").read_text(encoding="utf-8"))
    assert {"task", "encoder", "tune", "test"} <= split.keys()
    assert split["task"] == "mytask" and split["encoder"] == ENCODER
    assert len(split["tune"]) == len(split["test"]) == 25
    body = json.loads((first.run_dir / "pick.json").read_text(encoding="utf-8"))
    assert body["encoder"] == ENCODER and body["task"] == "mytask"
    assert (body["program"] is None) != (body["program_file"] is None)
    if body["program_file"] is not None:
        assert (first.run_dir / body["program_file"]).is_file()
    assert pick.name == body["name"]
    assert (first.run_dir / "report" / "table.md").is_file()


def test_a_resume_recomputes_nothing(runs):
    original, first, _, _ = runs
    before = {p: p.read_bytes() for p in first.run_dir.rglob("*.json")}
    run_tune(config(original), first)
    after = {p: p.read_bytes() for p in first.run_dir.rglob("*.json")}
    assert before == after


@pytest.mark.ray
def test_the_search_under_ray_makes_the_choices_it_makes_in_process(runs, tmp_path):
    """``tune --executor ray``: the search's candidates run as Ray tasks, and every record a
    choice is made from, and the choice, are the in-process run's."""
    ray = pytest.importorskip("ray")
    original, first, _, _ = runs
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        where = replace(first.where, run_dir=tmp_path / "run-ray", executor="ray")
        setup = TuneSetup(where)
        run_tune(config(original), setup)
    finally:
        ray.shutdown()
    assert choices(setup.run_dir) == choices(first.run_dir)


def test_the_index_built_from_the_run_serves_evaluate_s_scores(runs, tmp_path):
    original, first, _, _ = runs
    picked = deployment(first.run_dir)
    fusion = json.loads((first.run_dir / "fusion.json").read_text(encoding="utf-8"))["program"]
    task = load_beir_folder(original)
    split = json.loads((first.run_dir / "split.json").read_text(encoding="utf-8"))
    test = restrict_queries(task, split["test"])
    encoder = CachedEncoder(load_encoder(ENCODER), tmp_path / "cache")
    docs = [
        Document(i, t, b)
        for i, t, b in zip(task.doc_ids, task.doc_titles, task.doc_bodies, strict=True)
    ]
    served = [picked.program or picked.program_file, fusion]
    for what in dict.fromkeys(served):
        if isinstance(what, Path):
            from embedding_ttc.deploy.program_file import read_deployable
            from embedding_ttc.program_files.program_file import read_program_file

            program = read_program_file(what).sandboxed()
            built: object = read_deployable(what)
        else:
            program, built = get_program(what), what
        index = Index.build(
            tmp_path / f"ix{len(list(tmp_path.iterdir()))}",
            docs,
            encoder=encoder,
            program=built,
            reference_queries=list(test.query_texts[:8]),
        )
        reranker = Reranker(index, encoder)
        (run,) = run_programs([program], test, encoder, shortlist=picked.shortlist)
        # The test queries fit one shortlist batch: a joint call is evaluate's call (a program
        # whose scores take statistics over the batch of queries gets the same batch).
        ids = [[task.doc_ids[j] for j in cand] for cand, _ in run.rows]
        scored = reranker.score(list(test.query_texts), ids, joint=True)
        for (cand, values), got_cand, got in zip(
            run.rows, scored.candidates, scored.scores, strict=True
        ):
            order = np.argsort(cand)
            np.testing.assert_array_equal(cand[order], got_cand)
            assert float(np.abs(values[order] - got).max()) <= 1e-5, what


def test_the_guide_s_commands_tune_and_build_the_pick_s_index(tmp_path, capsys):
    """docs/tune.md's commands, on a BEIR folder of the user's (a copy of a packaged task)."""
    from embedding_ttc.cli import main

    folder = beir_copy(tmp_path / "my-task")
    run_dir = tmp_path / "runs" / "tune-my-task"
    common = ("--encoder", ENCODER, "--cache-dir", str(tmp_path / "cache"))
    argv = ["tune", "--task-dir", str(folder), "--run-dir", str(run_dir), *common]
    code = main([*argv, "--generations", "1", "--budget-minutes", "30", "--no-progress"])
    assert code == 0
    out = capsys.readouterr().out
    assert out.startswith("pick: ") and "index build --from-tune" in out
    assert (run_dir / "pick.json").is_file() and (run_dir / "report" / "table.md").is_file()
    index = tmp_path / "my-index"
    cache = ("--cache-dir", str(tmp_path / "cache"), "--no-progress")
    assert main(["index", "build", "--from-tune", str(run_dir), "--out", str(index), *cache]) == 0
    manifest = json.loads((index / "manifest.json").read_text(encoding="utf-8"))
    picked = json.loads((run_dir / "pick.json").read_text(encoding="utf-8"))
    assert manifest["encoder"]["name"] == ENCODER
    if picked["program"] is not None:
        assert manifest["program"]["name"] == picked["program"]
