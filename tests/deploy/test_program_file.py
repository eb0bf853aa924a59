"""``index build --program-file``: a program found by the search, deployed and served.

The program files are in ``programs/`` beside this file, written for these tests: one with
two kinds of index-time encode (sentence MaxSim, the documents under the query view), one
with a lexical channel whose statistics are over the candidates, one with column z-scores
over the batch of queries. Each runs in the sandbox, at build time and when served, as
``evaluate --program-file`` runs it; their deployed scores are compared with evaluate's.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from embedding_ttc.cli.deploy import main as deploy_main
from embedding_ttc.deploy.corpus import Document
from embedding_ttc.deploy.errors import DeployError, IndexCorruptError
from embedding_ttc.deploy.index import Index
from embedding_ttc.deploy.program_file import read_deployable
from embedding_ttc.deploy.reranker import Reranker
from embedding_ttc.evaluation.evaluate import run_programs
from embedding_ttc.program_files.program_file import read_program_file
from embedding_ttc.program_files.sandbox.program import (
    SandboxedProgram,
    source_sha256,
)
from embedding_ttc.program_files.sandbox.served import ServedInputs
from embedding_ttc.tasks.task import RetrievalTask

from . import QUERIES, TEXTS, corpus
from fakes import HashingEncoder

PROGRAMS = Path(__file__).parent / "programs"
TOL = 1e-6


def task_of(docs: list[Document], queries: list[str]) -> RetrievalTask:
    """An evaluation task over ``docs`` (judgements are irrelevant to the scores compared)."""
    qids = [f"q{i}" for i in range(len(queries))]
    return RetrievalTask(
        name="deploy-program-file",
        doc_ids=[d.id for d in docs],
        doc_titles=[d.title for d in docs],
        doc_bodies=[d.text for d in docs],
        query_ids=qids,
        query_texts=queries,
        qrels={q: {docs[0].id: 1} for q in qids},
    )


def evaluated(name: str, docs: list[Document], queries: list[str], encoder, **kw):
    """``evaluate --program-file``'s run: the file loaded as it loads it, then run_programs."""
    return next(
        run_programs(
            [read_program_file(PROGRAMS / f"{name}.py").sandboxed()],
            task_of(docs, queries),
            encoder,
            **kw,
        )
    )


def max_diff(run, scored) -> float:
    worst = 0.0
    for (cand, values), dep_cand, dep_values in zip(
        run.rows, scored.candidates, scored.scores, strict=True
    ):
        cand = np.arange(values.size) if cand is None else cand
        order = np.argsort(cand)
        np.testing.assert_array_equal(cand[order], dep_cand)
        worst = max(worst, float(np.abs(values[order] - dep_values).max()))
    return worst


def leftovers(parent: Path) -> list[str]:
    return [p.name for p in parent.iterdir() if ".tmp-" in p.name or ".old-" in p.name]


@pytest.fixture(scope="module")
def encoder() -> HashingEncoder:
    return HashingEncoder(two_views=True)


@pytest.fixture(scope="module")
def built(tmp_path_factory, encoder):
    """Build (once per module) the index of a copy of a program file of ``programs/``."""
    root = tmp_path_factory.mktemp("program-files")
    (root / "programs").mkdir()
    indexes: dict[str, Index] = {}

    def get(name: str) -> Index:
        if name not in indexes:
            copy = root / "programs" / f"{name}.py"
            shutil.copy(PROGRAMS / copy.name, copy)
            indexes[name] = Index.build(
                root / name,
                corpus(),
                encoder=encoder,
                program=read_deployable(copy),
                reference_queries=QUERIES,
                reference_source="test queries",
                source="test",
            )
        return indexes[name]

    return get


# --- the build and its manifest ------------------------------------------------------------------


def test_the_manifest_records_the_derived_recipe_source_sha256_and_provenance(built):
    index = built("sentence_view")
    text = (PROGRAMS / "sentence_view.py").read_text()
    raw = json.loads((index.directory / "manifest.json").read_text())
    assert raw["schema_version"] == 3
    program = index.manifest.program
    assert program.name == "sentence_view"
    found = program.discovered
    assert found is not None
    assert found.source == text
    assert found.sha256 == hashlib.sha256(text.encode()).hexdigest()
    assert found.provenance.file.endswith("programs/sentence_view.py")
    assert found.provenance.parent_id == "g0001"
    assert found.provenance.novelty.startswith("written for the deploy tests")
    # Derived: sentences and the documents under the query view at index time, nothing per
    # query, and no change in a query's scores from other queries or candidates.
    assert program.split["artifacts"] == [
        "document@retrieval.passage",
        "sentence@retrieval.passage",
        "document@retrieval.query",
    ]
    assert (program.split["lexical"], program.split["query_encodes"]) == (False, 0)
    assert program.split["batch"] == "candidates"  # the probes saw no change; never independent
    assert found.batch.own_lists_moved <= found.batch.tolerance
    assert index.recipe == found.recipe.recipe()
    assert [c.artifact for c in index.manifest.segments[0].chunks] == program.split["artifacts"][1:]
    assert index.manifest.reference is None
    Index.load(index.directory, verify=True)


def test_lexical_and_batch_statistics_programs_derive_their_kinds(built):
    lexical = built("lexical_sum").manifest
    assert lexical.program.split["lexical"] is True
    assert lexical.program.split["batch"] == "candidates"
    batch = lexical.program.discovered.batch
    assert batch.own_lists_moved > batch.tolerance >= batch.shared_list_moved  # measured so
    assert lexical.program.split["artifacts"] == ["document@retrieval.passage"]
    assert lexical.reference is None
    column = built("column_z").manifest
    assert column.program.split["batch"] == "reference"
    assert column.program.discovered.batch.shared_list_moved > 0.01
    assert column.reference is not None and column.reference.count == len(QUERIES)


# --- deployed scores are evaluate's --------------------------------------------------------------


def test_full_corpus_and_shortlist_scores_equal_evaluate(built, encoder):
    reranker = Reranker(built("sentence_view"), encoder)
    assert isinstance(reranker.program, SandboxedProgram)
    docs, ids = corpus(), list(reranker.index.doc_ids)
    run = evaluated("sentence_view", docs, QUERIES, encoder)
    scored = reranker.score(QUERIES, [ids] * len(QUERIES))
    assert max_diff(run, scored) <= TOL
    assert scored.stats.index_misses == 0
    assert scored.stats.program_encodes == 0  # the stored sentences and documents served all
    for (_, want, _), got in zip(run.rankings(5), reranker.top(scored, 5), strict=True):
        assert [d for d, _ in got] == want
    # A shortlist, one query at a time (an independent program's scores do not move).
    short = evaluated("sentence_view", docs, QUERIES, encoder, shortlist=3)
    for i in (0, 3):
        cand, values = short.rows[i]
        got = dict(reranker.rerank(QUERIES[i], [ids[j] for j in cand], k=3))
        assert max(abs(got[ids[j]] - v) for j, v in zip(cand, values, strict=True)) <= TOL


@pytest.mark.parametrize("name", ["lexical_sum", "column_z"])
def test_batch_dependent_programs_equal_evaluate(built, encoder, name):
    index = built(name)
    reranker = Reranker(index, encoder)
    docs = corpus()
    # Run jointly, the deployed call is evaluate's shortlist batch (all four queries).
    run = evaluated(name, docs, QUERIES, encoder, shortlist=3)
    lists = [[index.doc_ids[j] for j in cand] for cand, _ in run.rows]
    assert max_diff(run, reranker.score(QUERIES, lists, joint=True)) <= TOL
    # Deployed, a query alone is evaluate's run over its own candidates, with the index's
    # reference queries in the batch for a program of statistics over the queries.
    reference = list(index.reference.texts) if index.reference is not None else []
    for i in (0, 2):
        mine = [d for d in docs if d.id in set(lists[i])]
        alone = evaluated(name, mine, [QUERIES[i], *reference], encoder)
        got = reranker.score([QUERIES[i]], [lists[i]])
        np.testing.assert_allclose(got.scores[0], alone.rows[0][1], atol=TOL)


def test_served_primitives_score_as_evaluate(built, encoder, monkeypatch):
    # g0048's primitives (BM25 over the candidates, paragraph and sentence rows): served from
    # the index's stored analyses and chunk rows, their scores are evaluate's. (The corpus's
    # paragraphs are its documents: their rows are found by text in the store.)
    index = built("paragraph_bm25")
    assert index.analyses is not None
    assert "sentence@retrieval.passage" in index.manifest.program.split["artifacts"]
    served = {"bm25": 0, "chunks": 0, "stored": 0}
    for name in served:
        original = getattr(ServedInputs, name)

        def spy(self, *args, _name=name, _original=original, **kwargs):
            served[_name] += 1
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(ServedInputs, name, spy)
    reranker = Reranker(index, encoder)
    docs = corpus()
    run = evaluated("paragraph_bm25", docs, QUERIES, encoder, shortlist=3)
    assert served == {"bm25": 0, "chunks": 0, "stored": 0}  # evaluate's child computes them
    lists = [[index.doc_ids[j] for j in cand] for cand, _ in run.rows]
    joint = reranker.score(QUERIES, lists, joint=True)
    assert max_diff(run, joint) == 0.0
    assert (served["bm25"], served["stored"]) == (1, 2) and served["chunks"] >= 2
    assert joint.stats.program_encodes == 0 and joint.stats.index_misses == 0
    for i in (0, 2):  # a query alone over its own candidates, as served
        mine = [d for d in docs if d.id in set(lists[i])]
        alone = evaluated("paragraph_bm25", mine, [QUERIES[i]], encoder)
        got = reranker.score([QUERIES[i]], [lists[i]])
        np.testing.assert_array_equal(got.scores[0], alone.rows[0][1])


def test_the_index_serves_its_copy_of_the_source(built, encoder):
    index = built("sentence_view")
    before = Reranker(index, encoder).score(QUERIES, [index.doc_ids] * len(QUERIES))
    path = Path(index.manifest.program.discovered.provenance.file)
    path.write_text("def program(Q, D, S, ctx):\n    return -S\n")  # edited after the build
    after = Reranker(Index.load(index.directory), encoder).score(QUERIES, [index.doc_ids] * 4)
    path.unlink()
    for a, b in zip(before.scores, after.scores, strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_tampered_stored_source_is_refused(built, encoder, tmp_path):
    copy = tmp_path / "ix"
    shutil.copytree(built("column_z").directory, copy)
    path = copy / "manifest.json"
    manifest = json.loads(path.read_text())
    stored = manifest["program"]["discovered"]
    stored["source"] = stored["source"].replace("S + zscore_cols(S)", "-S")
    path.write_text(json.dumps(manifest))
    with pytest.raises(IndexCorruptError, match="does not match its sha256"):
        Reranker.load(copy, encoder=encoder)
    # A source that matches its sha256 is checked statically again on load.
    stored["source"] = "import os\n\n\ndef program(Q, D, S, ctx):\n    return S.copy()\n"
    stored["sha256"] = source_sha256(stored["source"])
    path.write_text(json.dumps(manifest))
    with pytest.raises(DeployError, match="fails the search's static check 'no-external-model'"):
        Reranker.load(copy, encoder=encoder)


# --- the service ---------------------------------------------------------------------------------


def test_the_service_serves_evaluates_scores(built, encoder):
    pytest.importorskip("fastapi", reason="the serve extra is part of the dev extra")
    from fastapi.testclient import TestClient

    from embedding_ttc.deploy.service import create_app

    reranker = Reranker(built("sentence_view"), encoder)
    client = TestClient(create_app(reranker, shortlist=4))
    health = client.get("/health").json()
    assert (health["program"], health["sandboxed"]) == ("sentence_view", True)
    run = evaluated("sentence_view", corpus(), QUERIES, encoder)
    rankings = list(run.rankings(8))
    ids = list(reranker.index.doc_ids)
    for i in (1, 2):
        body = {"query": QUERIES[i], "candidates": ids[::-1], "k": 8}
        got = client.post("/rerank", json=body).json()["results"]
        _, values = run.rows[i]
        assert [r["id"] for r in got] == rankings[i][1]
        for r in got:
            assert r["score"] == pytest.approx(float(values[ids.index(r["id"])]), abs=TOL)
    found = client.post("/search", json={"query": QUERIES[0], "k": 2}).json()["results"]
    assert found == [{"id": d, "score": s} for d, s in reranker.search(QUERIES[0], 2, shortlist=4)]


def test_a_program_failing_on_a_request_is_a_500_and_the_service_goes_on(tmp_path, encoder):
    pytest.importorskip("fastapi", reason="the serve extra is part of the dev extra")
    from fastapi.testclient import TestClient

    from embedding_ttc.deploy.service import create_app

    path = tmp_path / "fragile.py"
    path.write_text(
        "def program(Q, D, S, ctx):\n"
        "    if 'explode' in ctx.query_texts[0]:\n"
        "        raise ValueError('asked to explode')\n"
        "    return S.copy()\n"
    )
    index = Index.build(tmp_path / "ix", corpus(), encoder=encoder, program=read_deployable(path))
    client = TestClient(create_app(Reranker(index, encoder)))
    body = {"query": "please explode", "candidates": ["d0", "d1"]}
    response = client.post("/rerank", json=body)
    assert response.status_code == 500
    error = response.json()["error"]
    assert error.startswith("program fragile failed (crashed)")
    assert "asked to explode" in error
    assert client.get("/health").status_code == 200
    assert client.post("/rerank", json={"query": "cats", "candidates": ["d0"]}).status_code == 200


# --- bad input -----------------------------------------------------------------------------------

QUERY_AT_INDEX_TIME = """\
def program(Q, D, S, ctx):
    with ctx.index_time():
        E = ctx.encode_fn(list(ctx.query_texts), "retrieval.query")
    return S + E @ D.T
"""

BAD = [
    ("absent.py", None, "program file .*absent.py does not exist"),
    ("broken.py", "def program(Q, D, S, ctx)\n    return S\n", r"'interface'.*syntax error"),
    (
        "escape.py",
        "import os\n\n\ndef program(Q, D, S, ctx):\n    return S.copy()\n",
        "fails the search's static check 'no-external-model': import of 'os' at line 1",
    ),
    (
        "sentmaxsim.py",
        "def program(Q, D, S, ctx):\n    return S.copy()\n",
        "its name 'sentmaxsim' is the library program 'SentMaxSim'",
    ),
    ("queries.py", QUERY_AT_INDEX_TIME, r"4 text\(s\) under view retrieval.query that no index"),
    (
        "crash.py",
        "def program(Q, D, S, ctx):\n    raise ValueError('no luck')\n",
        r"program crash failed during the recording pass .*\(crashed\).*no luck",
    ),
]


@pytest.mark.parametrize(("name", "source", "message"), BAD, ids=[b[0] for b in BAD])
def test_bad_program_files_are_named_and_leave_no_index(tmp_path, name, source, message):
    path = tmp_path / "files" / name
    path.parent.mkdir()
    if source is not None:
        path.write_text(source)
    encoder = HashingEncoder()
    out = tmp_path / "ix"
    with pytest.raises(DeployError, match=message):
        Index.build(out, corpus(), encoder=encoder, program=read_deployable(path))
    assert not out.exists()
    assert leftovers(tmp_path) == []


def test_refusals_before_the_build_encode_nothing(tmp_path, monkeypatch, capsys):
    import embedding_ttc.cli.common as cli

    encoder = HashingEncoder()
    monkeypatch.setattr(cli, "build_encoder", lambda *a, **k: encoder)
    corpus_file = tmp_path / "c.tsv"
    corpus_file.write_text("".join(f"d{i}\t{t}\t{x}\n" for i, (t, x) in enumerate(TEXTS)))
    bad = tmp_path / "bad.py"
    bad.write_text("import subprocess\n\n\ndef program(Q, D, S, ctx):\n    return S\n")
    argv = ["index", "build", "--corpus", str(corpus_file), "--out", str(tmp_path / "ix")]
    assert deploy_main([*argv, "--program-file", str(bad), "--no-progress"]) == 2
    assert "fails the search's static check 'no-external-model'" in capsys.readouterr().err
    assert encoder.calls == []
    assert not (tmp_path / "ix").exists()
    with pytest.raises(SystemExit):  # one program or the other
        deploy_main([*argv, "--program", "P0", "--program-file", str(bad)])


def test_cli_builds_a_program_file_and_says_what_it_derived(tmp_path, monkeypatch, capsys):
    import embedding_ttc.cli.common as cli

    monkeypatch.setattr(cli, "build_encoder", lambda *a, **k: HashingEncoder())
    corpus_file = tmp_path / "c.tsv"
    corpus_file.write_text("".join(f"d{i}\t{t}\t{x}\n" for i, (t, x) in enumerate(TEXTS)))
    out = tmp_path / "ix"
    argv = ["index", "build", "--corpus", str(corpus_file), "--out", str(out), "--no-progress"]
    assert deploy_main([*argv, "--program-file", str(PROGRAMS / "column_z.py")]) == 0
    err = capsys.readouterr().err
    assert "program column_z" in err
    assert "derived recipe: index-time artifacts none; lexical no" in err
    assert "encodes per query 1 (the query's own included" in err  # as `programs` says P0's
    assert "batch reference" in err and "served in the sandbox" in err
    assert Index.load(out, verify=True).manifest.program.discovered is not None


# --- adding documents ----------------------------------------------------------------------------

PARAGRAPHS = """\
from embedding_ttc.programs.primitives.chunking import chunk_documents, split_paragraphs
from embedding_ttc.programs.primitives.late import maxsim


def program(Q, D, S, ctx):
    pieces = chunk_documents(ctx.doc_texts, split_paragraphs, max_chunks_per_doc=32)
    with ctx.index_time():
        P = ctx.encode_fn(pieces.texts, "retrieval.passage")
    return S + maxsim(Q, P, pieces.owner, S.shape[1])
"""


def test_an_addition_runs_the_stored_source_and_is_refused_when_the_recipe_no_longer_fits(
    tmp_path, encoder
):
    path = tmp_path / "paragraphs.py"
    path.write_text(PARAGRAPHS)
    index = Index.build(tmp_path / "ix", corpus(5), encoder=encoder, program=read_deployable(path))
    # Each test document is one paragraph: the paragraphs are the documents, and the tie
    # is named as documents.
    assert index.manifest.program.split["artifacts"][1:] == ["document@retrieval.passage"]
    path.unlink()  # an addition runs the stored source, not the file
    added = index.add(corpus(2, start=5), encoder=encoder)
    assert added.manifest.counts.documents == 7
    assert added.manifest.program == index.manifest.program
    scored = Reranker(added, encoder).score(["chess moves"], [["d6", "d1"]])
    assert scored.stats.index_misses == 0
    # A document of two paragraphs tells paragraphs and documents apart: refused, unchanged.
    two = Document("p2", "", "First paragraph here.\n\nSecond paragraph there.")
    with pytest.raises(DeployError, match="rebuild the index with every document"):
        added.add([two], encoder=encoder)
    assert Index.load(tmp_path / "ix", verify=True).manifest.counts.documents == 7
    assert leftovers(tmp_path) == []
