"""Segments: first stages over them (exact, FAISS IVF, BM25 top-k), compaction, kills, schema 1."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from embedding_ttc.cli.deploy import main as deploy_main
from embedding_ttc.deploy.ann import (
    AnnPolicy,
    ann_top,
    build_ann,
    exact_top,
    load_ann,
    recall_lower_bound,
)
from embedding_ttc.deploy.corpus import Document
from embedding_ttc.deploy.errors import DeployError
from embedding_ttc.deploy.index import Index
from embedding_ttc.deploy.live_index import LiveIndex
from embedding_ttc.deploy.reranker import Reranker
from embedding_ttc.deploy.text_documents import text_documents
from embedding_ttc.evaluation.metrics import descending_id_rank, top_k
from embedding_ttc.programs.primitives.lexical import BM25

from . import QUERIES, corpus
from fakes import HashingEncoder

TESTS = Path(__file__).resolve().parents[1]
MORE_QUERIES = [*QUERIES, "the", "cat", "postman", "zebra unicorn", "bank rates rose"]


def build(path: Path, program: str = "SentMaxSim", docs=None, **kwargs) -> Index:
    return Index.build(
        path,
        docs if docs is not None else corpus(),
        encoder=HashingEncoder(),
        program=program,
        reference_queries=QUERIES,
        **kwargs,
    )


def grown(path: Path, program: str = "SentMaxSim", sizes=(12, 7, 9)) -> Index:
    """An index built from the first ``sizes[0]`` documents, then one addition per size."""
    start = sizes[0]
    index = build(path, program, corpus(start))
    for n in sizes[1:]:
        index = index.add(corpus(n, start=start), encoder=HashingEncoder())
        start += n
    return index


def expected_dense(index: Index, queries: list[str], n: int) -> list[list[str]]:
    """Today's dense first stage: the product over the whole matrix, trec_eval's ties."""
    encoder = HashingEncoder()
    D = index.vectors(np.arange(len(index)))
    S = encoder.encode(queries, view="retrieval.query") @ D.T
    rank = descending_id_rank(index.doc_ids)
    return [[index.doc_ids[j] for j in top_k(row, rank, n)] for row in S]


# --- BM25 top-k ---------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 3, 8, 15, 40, 41, 100])
def test_bm25_top_k_is_top_k_over_every_score(k):
    # 40 documents cycling through 8 texts: every score is tied five ways, and many are 0.
    texts = [d.joined for d in corpus(40)]
    bm25 = BM25.fit(texts)
    rank = descending_id_rank([f"d{i}" for i in range(40)])
    got = bm25.top_k(MORE_QUERIES, k, rank)
    for (rows, scores), full in zip(got, bm25.scores(MORE_QUERIES), strict=True):
        want = top_k(full, rank, k)
        assert rows.tolist() == want.tolist()
        np.testing.assert_array_equal(scores, full[want])


def test_bm25_fit_streams_and_scores_as_bm25s_does():
    import bm25s

    from embedding_ttc.programs.primitives.lexical import tokenize

    texts = [d.joined for d in corpus(16)]
    ours = BM25.fit(iter(texts)).scores(QUERIES)
    ref = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    ref.index([tokenize(t) for t in texts], show_progress=False)
    want = np.stack([ref.get_scores(tokenize(q)) for q in QUERIES])
    np.testing.assert_allclose(ours, want, rtol=1e-6)


def test_a_one_segment_index_ranks_bm25_as_before(tmp_path):
    index = build(tmp_path / "ix", "P0", corpus(40))
    reranker = Reranker(index, HashingEncoder())
    rank = descending_id_rank(index.doc_ids)
    full = BM25.fit(index.doc_texts).scores(MORE_QUERIES)
    want = [[index.doc_ids[j] for j in top_k(row, rank, 10)] for row in full]
    assert reranker.first_stage(MORE_QUERIES, 10, "bm25") == want


def test_bm25_of_several_segments_is_per_segment_until_compacted(tmp_path):
    index = grown(tmp_path / "ix", "P0", (20, 10, 10))
    reranker = Reranker(index, HashingEncoder())
    rank = descending_id_rank(index.doc_ids)
    # Merged by score, each segment scoring with its own statistics.
    per_segment = np.concatenate([s.bm25.scores(MORE_QUERIES) for s in index.segments], axis=1)
    want = [[index.doc_ids[j] for j in top_k(row, rank, 10)] for row in per_segment]
    assert reranker.first_stage(MORE_QUERIES, 10, "bm25") == want
    compacted = Reranker(index.compact(), HashingEncoder())
    full = BM25.fit(index.doc_texts).scores(MORE_QUERIES)
    want = [[index.doc_ids[j] for j in top_k(row, rank, 10)] for row in full]
    assert compacted.first_stage(MORE_QUERIES, 10, "bm25") == want


# --- the dense first stage ----------------------------------------------------------------------


def test_one_exact_segment_ranks_as_the_whole_matrix_did(tmp_path):
    index = build(tmp_path / "ix", "P0", corpus(28))
    reranker = Reranker(index, HashingEncoder())
    for n in (1, 5, 10, 28, 50):
        assert reranker.first_stage(MORE_QUERIES, n) == expected_dense(index, MORE_QUERIES, n)


def test_exact_segments_merge_to_the_whole_matrix_ranking_up_to_float_ties(tmp_path):
    # The corpus repeats its 8 texts: equal documents in different segments tie, and the
    # products over matrices of different sizes may differ in the last bit, so which of two
    # tied documents comes first may differ; the scores down the ranking may not.
    index = grown(tmp_path / "ix", "P0")
    assert len(index.segments) == 3
    reranker = Reranker(index, HashingEncoder())
    Q = HashingEncoder().encode(MORE_QUERIES, view="retrieval.query")
    D = index.vectors(np.arange(len(index)))
    row = {d: i for i, d in enumerate(index.doc_ids)}
    for n in (1, 5, 10, 28, 50):
        got = reranker.first_stage(MORE_QUERIES, n)
        want = expected_dense(index, MORE_QUERIES, n)
        for q, (g, w) in enumerate(zip(got, want, strict=True)):
            score = lambda ids, q=q: [float(Q[q] @ D[row[d]]) for d in ids]  # noqa: E731
            np.testing.assert_allclose(score(g), score(w), atol=1e-6)


@pytest.mark.parametrize(
    ("codes", "kind", "rescore"),
    [("pq4fs", "ivf-pq4fs", 10), ("sq8", "ivf-sq8", 2), ("flat", "ivf-flat", 1)],
)
def test_ivf_recall_at_100_on_random_vectors(tmp_path, codes, kind, rescore):
    rng = np.random.default_rng(7)
    D = rng.standard_normal((4000, 32)).astype(np.float32)
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    record = build_ann(D, tmp_path, AnnPolicy(exact_below=1000, codes=codes))
    assert record is not None and (record.kind, record.rescore) == (kind, rescore)
    assert record.nlist == int(4 * np.sqrt(4000))
    assert record.recall >= 0.95
    index = load_ann(tmp_path, record)
    assert index.nprobe == record.nprobe
    Q = rng.standard_normal((100, 32)).astype(np.float32)
    Q /= np.linalg.norm(Q, axis=1, keepdims=True)
    truth = exact_top(D, Q, 100)
    scores, found = ann_top(index, D, Q, 100, record.rescore)
    recall = np.mean([len(set(f) & set(t)) / 100 for f, t in zip(found, truth, strict=True)])
    assert recall >= 0.95
    # The scores are exact inner products (re-scored from D for sq8), best first.
    np.testing.assert_allclose(scores[0], D[found[0]] @ Q[0], rtol=1e-5, atol=1e-6)
    assert np.all(np.diff(scores, axis=1) <= 0)
    # Below the threshold: no ANN index, the segment is searched exactly.
    assert build_ann(D[:999], tmp_path / "small", AnnPolicy(exact_below=1000)) is None


def test_the_calibration_asks_the_lower_confidence_bound_of_the_recall_to_reach_the_target():
    # 200 queries with a mean recall of exactly 0.95: the mean reaches 0.95, its bound does not.
    recalls = np.array([1.0] * 150 + [0.8] * 50)
    assert recalls.mean() == pytest.approx(0.95)
    assert recall_lower_bound(recalls) < 0.95
    assert recall_lower_bound(np.ones(200)) == 1.0
    assert recall_lower_bound(np.array([0.7])) == pytest.approx(0.7)
    sd = recalls.std(ddof=1)
    assert recall_lower_bound(recalls) == pytest.approx(0.95 - 1.96 * sd / np.sqrt(200))


def test_calibrating_on_query_like_vectors_holds_recall_on_queries_where_midpoints_do_not(
    tmp_path,
):
    # Documents in 40 clusters, queries in random directions away from them (as real queries,
    # another kind of text, lie apart from the documents): midpoints of documents pick a
    # probe count that misses the target on such queries; calibrating on 200 of them holds it
    # on 200 others.
    rng = np.random.default_rng(3)
    centres = rng.standard_normal((40, 32)).astype(np.float32)
    D = centres[rng.integers(0, 40, 6000)] + 0.35 * rng.standard_normal((6000, 32))
    D = (D / np.linalg.norm(D, axis=1, keepdims=True)).astype(np.float32)
    Q = rng.standard_normal((400, 32)).astype(np.float32)
    Q /= np.linalg.norm(Q, axis=1, keepdims=True)
    calibration, held = Q[:200], Q[200:]
    truth = exact_top(D, held, 100)
    recall = {}
    for name, queries in (("midpoints", None), ("queries", calibration)):
        (tmp_path / name).mkdir()
        record = build_ann(D, tmp_path / name, AnnPolicy(exact_below=1000), queries)
        assert record is not None and record.calibration == name and record.recall >= 0.95
        _, found = ann_top(load_ann(tmp_path / name, record), D, held, 100, record.rescore)
        recall[name] = np.mean(
            [len(set(f) & set(t)) / 100 for f, t in zip(found, truth, strict=True)]
        )
    assert recall["midpoints"] < 0.95 <= recall["queries"]


def test_an_index_keeps_its_calibration_queries_for_the_segments_it_adds_and_compacts(tmp_path):
    encoder = HashingEncoder()
    policy = AnnPolicy(exact_below=100)
    docs = [
        Document(f"r{i}", "", f"text number {i} about {i % 17} and {i % 5}") for i in range(150)
    ]
    queries = [f"about {i} and {i % 5}" for i in range(30)]
    index = Index.build(
        tmp_path / "ix", docs, encoder=encoder, program="P0", reference_queries=queries, ann=policy
    )
    assert index.manifest.counts.ann_queries == len(queries)
    more = [Document(f"s{i}", "", f"another text {i} of {i % 11}") for i in range(120)]
    index = index.add(more, encoder=encoder, ann=policy)
    index = index.compact(ann=policy)
    (segment,) = index.manifest.segments
    assert segment.ann is not None and segment.ann.calibration == "queries"
    assert index.manifest.counts.ann_queries == len(queries)
    # An index built before the queries were kept: an addition calibrates on pseudo-queries
    # of its documents, encoded now; a compaction, with no encoder, on midpoints.
    root = index.directory
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["counts"]["ann_queries"] = 0
    (root / "manifest.json").write_text(json.dumps(manifest))
    late = [Document(f"t{i}", "", f"late text {i} of {i % 7}") for i in range(110)]
    index = Index.load(root).add(late, encoder=encoder, ann=policy)
    assert index.manifest.segments[-1].ann.calibration == "queries"
    assert index.compact(ann=policy).manifest.segments[0].ann.calibration == "midpoints"


def test_segments_above_the_threshold_get_an_ivf_index_that_is_searched(tmp_path):
    encoder = HashingEncoder()
    policy = AnnPolicy(exact_below=150)
    docs = [
        Document(f"r{i}", "", f"text number {i} about {i % 17} and {i % 5}") for i in range(300)
    ]
    index = Index.build(tmp_path / "ix", docs, encoder=encoder, program="P0", ann=policy)
    (segment,) = index.manifest.segments
    assert segment.ann is not None and "ann.faiss" in segment.files
    more = [Document(f"s{i}", "", f"another text {i} of {i % 11}") for i in range(40)]
    index = index.add(more, encoder=encoder, ann=policy)
    assert index.manifest.segments[1].ann is None  # 40 documents: exact
    reranker = Reranker(index, encoder)
    queries = ["text about 3 and 4", "another text of 7", "number 12"]
    got = reranker.first_stage(queries, 20)
    want = expected_dense(index, queries, 20)
    overlap = np.mean([len(set(g) & set(w)) / 20 for g, w in zip(got, want, strict=True)])
    assert overlap >= 0.9
    assert all(len(g) == 20 for g in got)
    # The exact first stage ignores the ANN index: the whole-matrix ranking up to float ties.
    exact = reranker.first_stage(queries, 20, "exact")
    assert all(set(e) == set(w) for e, w in zip(exact, want, strict=True))
    with pytest.raises(ValueError, match="choose from dense, exact, bm25"):
        reranker.first_stage(queries, 20, "sparse")  # type: ignore[arg-type]


# --- compaction ---------------------------------------------------------------------------------


@pytest.mark.parametrize("program", ["SentMaxSim", "BidirZScore", "LexicalHybridRRF"])
def test_scores_are_the_same_before_an_add_after_it_and_after_compacting(tmp_path, program):
    encoder = HashingEncoder()
    grown_index = grown(tmp_path / "ix", program, (10, 6, 8))
    fresh = build(tmp_path / "fresh", program, corpus(24))
    lists = [list(fresh.doc_ids)] * len(QUERIES)
    want = Reranker(fresh, encoder).score(QUERIES, lists)
    compacted = grown_index.compact()
    assert [h.action for h in compacted.manifest.history] == ["build", "add", "add", "compact"]
    assert sorted(p.name for p in (tmp_path / "ix" / "segments").iterdir()) == ["000003"]
    for index in (grown_index, compacted):
        got = Reranker(index, encoder).score(QUERIES, lists)
        assert got.stats.index_misses == 0
        for x, y in zip(got.scores, want.scores, strict=True):
            np.testing.assert_allclose(x, y, atol=1e-6)
    (segment,) = compacted.manifest.segments
    for chunk in segment.chunks:  # chunk tables renumbered into the one segment
        owner = np.load(compacted.segments[0].directory / f"{chunk.file}.owner.npy")
        assert owner.max() == 23 and np.all(np.diff(owner) >= 0)
    assert Index.load(tmp_path / "ix", verify=True).doc_ids == fresh.doc_ids


def test_rerank_texts_finds_held_texts_in_every_segment(tmp_path):
    index = grown(tmp_path / "ix", "P0")
    reranker = Reranker(index, HashingEncoder())
    texts = [index.doc_texts[20], index.doc_texts[3], "a text the index lacks entirely"]
    scored = reranker.score_texts(QUERIES[0], texts)
    assert scored.held.tolist() == [True, True, False]
    # A bare text held by several rows is the first of them (d4, d12, d20 share a text).
    held = reranker._held(text_documents(texts))
    assert held.tolist() == [4, 3, -1]
    records = [{"id": "d20", "text": texts[0]}, {"id": "d21", "text": "changed"}]
    assert reranker._held(text_documents(records)).tolist() == [20, -1]


def test_cli_compact(tmp_path, capsys):
    grown(tmp_path / "ix", "P0")
    assert deploy_main(["index", "compact", str(tmp_path / "ix"), "--no-progress"]) == 0
    assert "3 segment(s) into 1, 28 documents" in capsys.readouterr().err
    assert len(Index.load(tmp_path / "ix").segments) == 1


# --- an index of the previous schema ------------------------------------------------------------


@pytest.mark.parametrize("version", [1, 2])
def test_an_index_of_an_older_schema_is_refused_naming_the_file_and_the_version(tmp_path, version):
    built = build(tmp_path / "ix", "P0", corpus(5))
    path = built.directory / "manifest.json"
    body = json.loads(path.read_text())
    path.write_text(json.dumps({**body, "schema_version": version}))
    with pytest.raises(DeployError, match=f"{path}: schema_version {version} is not supported"):
        Index.load(built.directory)


# --- kills --------------------------------------------------------------------------------------

KILLER = """
import os, signal, sys
sys.path.insert(0, {tests!r})
import numpy as np
from fakes import HashingEncoder
from embedding_ttc.deploy import build, compact, segment
from embedding_ttc.deploy.index import Index
from embedding_ttc.deploy.corpus import Document

module, name, when = {module!r}, {name!r}, {when!r}
target = {{"build": build, "compact": compact, "segment": segment}}[module]
real = getattr(target, name)
calls = []

def killing(*args, **kwargs):
    calls.append(1)
    if when == "before":
        os.kill(os.getpid(), signal.SIGKILL)
    out = real(*args, **kwargs)
    if when == "after" or (when == "second" and len(calls) == 2):
        os.kill(os.getpid(), signal.SIGKILL)
    return out

setattr(target, name, killing)
index = Index.load({root!r})
if {action!r} == "add":
    docs = [Document(f"new{{i}}", "", f"a new document number {{i}}. It is new.") for i in range(5)]
    index.add(docs, encoder=HashingEncoder())
else:
    index.compact()
print("finished")
"""

KILL_POINTS = [
    ("add", "segment", "write_doc_table", "after"),  # inside the staged segment
    ("add", "segment", "publish_dir", "after"),  # segment in place, not listed
    ("add", "build", "publish_manifest", "before"),
    ("add", "build", "publish_manifest", "after"),  # the new version, whole
    ("compact", "segment", "write_doc_table", "after"),
    ("compact", "compact", "publish_manifest", "before"),
    ("compact", "compact", "publish_manifest", "after"),  # old segments not yet removed
    ("compact", "segment", "_remove", "second"),  # half of the old segments removed
]


@pytest.mark.parametrize(("action", "module", "name", "when"), KILL_POINTS)
def test_a_killed_add_or_compact_leaves_the_old_version_or_the_new_one(
    tmp_path, action, module, name, when
):
    root = tmp_path / "ix"
    before = grown(root, "SentMaxSim", (8, 4, 4))
    encoder = HashingEncoder()
    ids_before = before.doc_ids
    lists = [list(ids_before)] * 2
    scores_before = Reranker(before, encoder).score(QUERIES[:2], lists).scores
    live = LiveIndex(Reranker(before, encoder))  # a service answering while the writer dies
    script = KILLER.format(
        tests=str(TESTS), module=module, name=name, when=when, root=str(root), action=action
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    after = Index.load(root, verify=True)
    n_new = len(ids_before) + (5 if action == "add" else 0)
    assert len(after) in (len(ids_before), n_new)
    assert after.doc_ids[: len(ids_before)] == ids_before
    expect_segments = {3, 4} if action == "add" else {3, 1}
    assert len(after.segments) in expect_segments
    got = Reranker(after, encoder).score(QUERIES[:2], lists).scores
    for x, y in zip(got, scores_before, strict=True):
        np.testing.assert_allclose(x, y, atol=1e-6)
    # The service swaps in the version the writer completed, or keeps the one it had.
    refreshed = live.refresh()
    assert refreshed.error == "" and len(live.current.index) == len(after)
    served = live.current.score(QUERIES[:2], lists).scores
    for x, y in zip(served, scores_before, strict=True):
        np.testing.assert_allclose(x, y, atol=1e-6)
    # The next writer works, and sweeps what the killed one left.
    more = after.add([Document("late", "", "A late document. About cats.")], encoder=encoder)
    final = more.compact()
    assert final.doc_ids[-1] == "late"
    assert len(final) == len(after) + 1
    listed = [s.name for s in final.manifest.segments]
    assert sorted(p.name for p in (root / "segments").iterdir()) == listed
    allowed = {"manifest.json", "reference.jsonl", "reference.npy", "segments"}
    allowed |= {"ann-queries.jsonl", "ann-queries.npy"}
    assert {p.name for p in root.iterdir()} <= allowed
    leftovers = [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name]
    assert leftovers == []


# --- re-indexing the ANN ------------------------------------------------------------------------


def _ann_index(root: Path) -> Index:
    """An index of 300 documents in two segments: 260 with an 8-bit IVF, 40 searched exactly."""
    policy = AnnPolicy(exact_below=150, codes="sq8")
    docs = [
        Document(f"r{i}", "", f"text number {i} about {i % 17} and {i % 5}") for i in range(260)
    ]
    queries = [f"about {i} and {i % 5}" for i in range(30)]
    index = Index.build(
        root, docs, encoder=HashingEncoder(), program="P0", reference_queries=queries, ann=policy
    )
    more = [Document(f"s{i}", "", f"another text {i} of {i % 11}") for i in range(40)]
    return index.add(more, encoder=HashingEncoder(), ann=policy)


def test_reindexing_the_ann_rewrites_only_the_ann_files_and_keeps_rows_and_scores(tmp_path):
    root = tmp_path / "ix"
    before = _ann_index(root)
    first, second = before.manifest.segments
    assert first.ann is not None and first.ann.kind == "ivf-sq8" and second.ann is None
    queries = ["text about 3 and 4", "another text of 7", "number 12"]
    reranker = Reranker(before, HashingEncoder())
    lists = [list(before.doc_ids[:50])] * len(queries)
    scores = reranker.score(queries, lists).scores

    after = before.reindex_ann(ann=AnnPolicy(exact_below=150))
    new_first, new_second = after.manifest.segments
    assert new_first.ann is not None
    assert (new_first.ann.kind, new_first.ann.file, new_first.ann.rescore) == (
        "ivf-pq4fs",
        "ann-1.faiss",
        10,
    )
    assert new_first.ann.calibration == "queries" and new_first.ann.recall >= 0.95
    assert new_second.ann is None
    # Only the ANN file changed: every other file, its size and hash, is the old one.
    old_files = {k: v for k, v in first.files.items() if k != "ann.faiss"}
    assert {k: v for k, v in new_first.files.items() if k != "ann-1.faiss"} == old_files
    folder = root / "segments" / first.name
    assert not (folder / "ann.faiss").exists() and (folder / "ann-1.faiss").exists()
    assert after.manifest.history[-1].action == "ann"
    assert after.manifest.history[-1].documents == 300
    reloaded = Index.load(root, verify=True)
    assert reloaded.doc_ids == before.doc_ids
    new_reranker = Reranker(reloaded, HashingEncoder())
    for x, y in zip(new_reranker.score(queries, lists).scores, scores, strict=True):
        np.testing.assert_allclose(x, y, atol=1e-6)
    got = new_reranker.first_stage(queries, 20)
    want = expected_dense(reloaded, queries, 20)
    overlap = np.mean([len(set(g) & set(w)) / 20 for g, w in zip(got, want, strict=True)])
    assert overlap >= 0.9
    # Again, and back to a policy under which the first segment is searched exactly.
    again = after.reindex_ann(ann=AnnPolicy(exact_below=150))
    assert again.manifest.segments[0].ann.file == "ann-2.faiss"  # type: ignore[union-attr]
    assert not (folder / "ann-1.faiss").exists()
    exact = again.reindex_ann(ann=AnnPolicy(exact_below=1000))
    assert all(s.ann is None for s in exact.manifest.segments)
    assert list(folder.glob("ann*.faiss")) == []
    assert set(Index.load(root, verify=True).manifest.segments[0].files) == set(old_files)


REINDEX_KILLER = """
import os, signal, sys
sys.path.insert(0, {tests!r})
from embedding_ttc.deploy import reindex
from embedding_ttc.deploy.ann import AnnPolicy
from embedding_ttc.deploy.index import Index

real = getattr(reindex, {name!r})

def killing(*args, **kwargs):
    if {when!r} == "before":
        os.kill(os.getpid(), signal.SIGKILL)
    out = real(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)
    return out

setattr(reindex, {name!r}, killing)
Index.load({root!r}).reindex_ann(ann=AnnPolicy(exact_below=150))
print("finished")
"""


@pytest.mark.parametrize(
    ("name", "when"),
    [
        ("build_ann", "after"),  # the new file written, not listed
        ("publish_manifest", "before"),
        ("publish_manifest", "after"),  # the new version listed, the old file not yet removed
    ],
)
def test_a_killed_reindexing_leaves_the_old_version_or_the_new_one(tmp_path, name, when):
    root = tmp_path / "ix"
    before = _ann_index(root)
    script = REINDEX_KILLER.format(tests=str(TESTS), name=name, when=when, root=str(root))
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    after = Index.load(root, verify=True)
    kind = after.manifest.segments[0].ann.kind  # type: ignore[union-attr]
    assert kind == ("ivf-pq4fs" if (name, when) == ("publish_manifest", "after") else "ivf-sq8")
    assert after.doc_ids == before.doc_ids
    # The next writer sweeps the file the killed one left; the segment holds what it lists.
    final = after.add([Document("late", "", "A late text about 3.")], encoder=HashingEncoder())
    folder = root / "segments" / final.manifest.segments[0].name
    listed = final.manifest.segments[0].files
    assert [p.name for p in folder.glob("ann*.faiss")] == [f for f in listed if f.startswith("ann")]


def test_cli_ann(tmp_path, capsys):
    _ann_index(tmp_path / "ix")
    args = ["index", "ann", str(tmp_path / "ix"), "--codes", "flat", "--exact-below", "150"]
    assert deploy_main(args) == 0
    err = capsys.readouterr().err
    assert "segment 000000 (260 documents): ivf-flat, nlist 64" in err
    assert "segment 000001 (40 documents): searched exactly" in err
    with pytest.raises(SystemExit):
        deploy_main(["index", "ann", str(tmp_path / "ix"), "--codes", "pq8"])
