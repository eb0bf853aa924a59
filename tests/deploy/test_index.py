"""The deployed index: layout, manifest, checks on load, atomic build and add."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from embedding_ttc.cli.deploy import main as deploy_main
from embedding_ttc.deploy import build as build_module
from embedding_ttc.deploy.corpus import Document, read_corpus, read_queries
from embedding_ttc.deploy.errors import (
    DeployError,
    EncoderMismatchError,
    IndexCorruptError,
    ProgramVersionError,
)
from embedding_ttc.deploy.index import Index
from embedding_ttc.deploy.reranker import Reranker
from embedding_ttc.durable import directories
from embedding_ttc.errors import DatasetError
from embedding_ttc.programs.primitives.lexical import BM25

from . import QUERIES, TEXTS, corpus
from fakes import HashingEncoder


def build(path: Path, program: str = "SentMaxSim", docs=None, encoder=None) -> Index:
    return Index.build(
        path,
        docs if docs is not None else corpus(),
        encoder=encoder or HashingEncoder(),
        program=program,
        reference_queries=QUERIES,
        reference_source="test queries",
        source="test",
    )


SEG = "segments/000000"  # the segment a build writes


def leftovers(parent: Path) -> list[str]:
    return [p.name for p in parent.iterdir() if ".tmp-" in p.name or ".old-" in p.name]


# --- corpus files ------------------------------------------------------------------------------


def test_read_corpus_jsonl_with_id_or__id(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(
        '{"_id": "a", "title": "T", "text": "x"}\n\n{"id": 7, "text": "y"}\n', encoding="utf-8"
    )
    assert read_corpus(path) == [Document("a", "T", "x"), Document("7", "", "y")]


def test_read_corpus_tsv_with_optional_header(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_text("id\ttitle\ttext\na\tT\tx y\nb\t\tz\n", encoding="utf-8")
    assert read_corpus(path) == [Document("a", "T", "x y"), Document("b", "", "z")]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("c.jsonl", '{"title": "no id"}\n', "c.jsonl:1: missing or invalid id field '_id'"),
        ("c.jsonl", '{"_id": "a", "text": "x"}\n{"_id": "a", "text": "y"}\n', "duplicate docu"),
        ("c.jsonl", '{"_id": "a", "text": "x"}\n{"_id": "b"}\n', "c.jsonl:2: no text field 'text'"),
        ("c.tsv", "a\tb\tc\td\n", "c.tsv:1: expected id<TAB>text or id<TAB>title<TAB>text"),
        ("c.jsonl", "", "no documents"),
    ],
)
def test_read_corpus_errors_name_the_problem(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DatasetError, match=message.replace("|", r"\|")):
        read_corpus(path)


def test_read_queries_plain_and_jsonl(tmp_path):
    (tmp_path / "q.txt").write_text("one\n\n two \n", encoding="utf-8")
    (tmp_path / "q.jsonl").write_text('{"text": "one"}\n{"text": "two"}\n', encoding="utf-8")
    assert read_queries(tmp_path / "q.txt") == ["one", "two"]
    assert read_queries(tmp_path / "q.jsonl") == ["one", "two"]


# --- build and load ----------------------------------------------------------------------------


def test_build_writes_a_versioned_checksummed_directory(tmp_path):
    index = build(tmp_path / "ix", "BidirZScore")
    root = tmp_path / "ix"
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["schema_version"] == 3
    assert manifest["embedding_ttc_version"]
    assert manifest["encoder"] == {
        "name": "fake-hashing",
        "model_id": "fake/hashing",
        "revision": "seed=0",
        "dim": 32,
        "collapsed": True,
    }
    assert manifest["program"]["name"] == "BidirZScore"
    assert manifest["program"]["version"] == 2
    assert manifest["program"]["split"]["batch"] == "reference"
    assert manifest["counts"]["documents"] == len(TEXTS)
    assert manifest["reference"] == {"source": "test queries", "count": len(QUERIES)}
    # Every file but the manifest is listed with its size and SHA-256: the reference sample
    # by the manifest, the rest by the one segment a build writes.
    on_disk = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()} - {
        "manifest.json"
    }
    (segment,) = manifest["segments"]
    assert segment["name"] == "000000"
    listed = set(manifest["files"]) | {f"segments/000000/{rel}" for rel in segment["files"]}
    assert listed == on_disk
    assert set(manifest["files"]) == {
        "reference.npy", "reference.jsonl", "ann-queries.npy", "ann-queries.jsonl"
    }  # fmt: skip
    # The ANN's calibration queries are the real queries given, encoded under the query view.
    assert (root / "ann-queries.jsonl").read_text().splitlines() == [
        json.dumps(q) for q in QUERIES
    ] and manifest["counts"]["ann_queries"] == len(QUERIES)
    for rel in on_disk:
        entry = manifest["files"].get(rel) or segment["files"][rel.removeprefix("segments/000000/")]
        data = (root / rel).read_bytes()
        assert entry == {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    assert {"documents.npy", "docs.jsonl", "docs.offsets.npy", "ids.jsonl", "store/00.npy"} <= set(
        segment["files"]
    )
    assert any(rel.startswith("bm25/") for rel in segment["files"])
    assert segment["ann"] is None  # 8 documents: searched exactly
    # Arrays are memory-mapped, the documents and ids round-trip, texts are read by row.
    assert isinstance(index.segments[0].documents, np.memmap)
    assert index.doc_ids == tuple(f"d{i}" for i in range(len(TEXTS)))
    assert index.document(0) == Document("d0", *TEXTS[0])
    assert index.doc_texts[7] == corpus()[7].joined
    assert list(index.doc_texts) == [d.joined for d in corpus()]
    assert leftovers(tmp_path) == []


def test_store_holds_the_documents_under_the_query_view_for_bidirzscore(tmp_path):
    encoder = HashingEncoder()
    index = build(tmp_path / "ix", "BidirZScore", encoder=encoder)
    group = index.store.groups[("retrieval.query", None, None)]
    assert sorted(group.texts) == sorted(d.joined for d in corpus())  # rows: longest first
    expected = encoder.encode(list(group.texts), view="retrieval.query")
    np.testing.assert_allclose(group.embeddings, expected, atol=1e-6)


def test_chunk_tables_map_each_sentence_to_its_document_and_store_row(tmp_path):
    index = build(tmp_path / "ix", "SentMaxSim")
    (chunk,) = index.manifest.segments[0].chunks
    assert chunk.artifact == "sentence@retrieval.passage"
    owner = np.load(index.segments[0].directory / f"{chunk.file}.owner.npy")
    rows = np.load(index.segments[0].directory / f"{chunk.file}.rows.npy")
    texts = index.store.groups[("retrieval.passage", None, None)].texts
    assert owner.tolist() == [i for i in range(len(TEXTS)) for _ in range(2)]
    assert texts[rows[0]] == "Cats The cat sat on the mat."  # title joined to the text


def test_build_refuses_an_existing_directory_unless_replaced(tmp_path):
    build(tmp_path / "ix", "P0")
    with pytest.raises(DeployError, match="already exists"):
        build(tmp_path / "ix", "P0")
    again = Index.build(
        tmp_path / "ix", corpus(3), encoder=HashingEncoder(), program="P0", replace=True
    )
    assert again.manifest.counts.documents == 3
    assert Index.load(tmp_path / "ix").manifest.counts.documents == 3
    assert leftovers(tmp_path) == []


def test_unknown_program_fails_before_encoding(tmp_path):
    encoder = HashingEncoder()
    with pytest.raises(KeyError, match="SoftCentroid"):
        Index.build(tmp_path / "ix", corpus(), encoder=encoder, program="SoftCentriod")
    assert encoder.calls == []


def test_interrupted_build_leaves_nothing_that_loads(tmp_path, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("disk full")

    # BM25 is fitted after the arrays and store files are written: fail there.
    monkeypatch.setattr(BM25, "fit", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        build(tmp_path / "ix", "SentMaxSim")
    assert not (tmp_path / "ix").exists()
    assert leftovers(tmp_path) == []
    with pytest.raises(DeployError, match="not a directory"):
        Index.load(tmp_path / "ix")


def test_a_killed_build_directory_does_not_load(tmp_path):
    # What a SIGKILL mid-build leaves: a temporary directory with arrays but no manifest.
    staging = tmp_path / ".ix.tmp-123"
    staging.mkdir()
    np.save(staging / "documents.npy", np.zeros((3, 4), np.float32))
    with pytest.raises(DeployError, match=r"no manifest\.json"):
        Index.load(staging)


def test_unsupported_schema_version_is_named(tmp_path):
    build(tmp_path / "ix", "P0")
    path = tmp_path / "ix" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["schema_version"] = 99
    path.write_text(json.dumps(manifest))
    with pytest.raises(DeployError, match="schema_version 99 is not supported"):
        Index.load(tmp_path / "ix")


def test_truncated_array_is_named_on_load(tmp_path):
    build(tmp_path / "ix", "SentMaxSim")
    path = tmp_path / "ix" / SEG / "store" / "00.npy"
    path.write_bytes(path.read_bytes()[:-8])
    with pytest.raises(IndexCorruptError, match=r"store/00\.npy is \d+ bytes"):
        Index.load(tmp_path / "ix")


def test_same_size_corruption_is_caught_by_verify(tmp_path):
    build(tmp_path / "ix", "SentMaxSim")
    path = tmp_path / "ix" / SEG / "documents.npy"
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF  # a flipped bit in the last float: same size, valid array
    path.write_bytes(bytes(data))
    Index.load(tmp_path / "ix")  # sizes only: not detected
    with pytest.raises(IndexCorruptError, match=r"documents\.npy does not match its SHA-256"):
        Index.load(tmp_path / "ix", verify=True)


def test_corrupted_array_header_is_named(tmp_path):
    build(tmp_path / "ix", "P0")
    path = tmp_path / "ix" / SEG / "documents.npy"
    data = bytearray(path.read_bytes())
    data[:6] = b"NOTNPY"
    path.write_bytes(bytes(data))
    with pytest.raises(IndexCorruptError, match=r"documents\.npy is not a readable array"):
        Index.load(tmp_path / "ix")


def test_missing_file_is_named(tmp_path):
    build(tmp_path / "ix", "P0")
    (tmp_path / "ix" / SEG / "docs.jsonl").unlink()
    with pytest.raises(IndexCorruptError, match=r"docs\.jsonl is missing"):
        Index.load(tmp_path / "ix")


def test_wrong_encoder_is_named_with_the_index_encoder(tmp_path):
    build(tmp_path / "ix", "P0", encoder=HashingEncoder(dim=32, seed=0))
    with pytest.raises(EncoderMismatchError) as err:
        Reranker.load(tmp_path / "ix", encoder=HashingEncoder(dim=16, seed=3))
    message = str(err.value)
    assert "revision 'seed=0', dim 32" in message
    assert "revision 'seed=3', dim 16" in message


def test_an_index_of_another_program_version_is_refused(tmp_path):
    build(tmp_path / "ix", "BidirZScore")
    path = tmp_path / "ix" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["program"]["version"] = 1  # as built before the column statistics changed
    path.write_text(json.dumps(manifest))
    message = "built with BidirZScore version 1, but the installed BidirZScore is version 2"
    with pytest.raises(ProgramVersionError, match=message):
        Reranker.load(tmp_path / "ix", encoder=HashingEncoder())
    with pytest.raises(ProgramVersionError, match="rebuild the index"):
        Index.load(tmp_path / "ix").add([Document("new", "", "a new document")])


# --- add ---------------------------------------------------------------------------------------


def test_add_writes_one_segment_encoding_only_the_new_documents(tmp_path):
    encoder = HashingEncoder(two_views=True)
    build(tmp_path / "ix", "LexicalHybridRRF", docs=corpus(5), encoder=encoder)
    before = Index.load(tmp_path / "ix")
    root = tmp_path / "ix"
    old_files = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}
    old_files.pop(root / "manifest.json")
    encoder.calls.clear()
    new_docs = corpus(3, start=5)
    added = before.add(new_docs, encoder=encoder)
    # Re-encoded: the new documents (D), their index-time texts and the sample queries only.
    n_index_texts = added.manifest.counts.index_encodes - before.manifest.counts.index_encodes
    sample = added.manifest.observed.sample_queries
    assert sum(encoder.calls) == len(new_docs) + n_index_texts + sample
    assert added.manifest.counts.documents == 8
    assert added.doc_ids == tuple(f"d{i}" for i in range(8))
    assert [h.action for h in added.manifest.history] == ["build", "add"]
    assert [s.name for s in added.manifest.segments] == ["000000", "000001"]
    assert [s.size for s in added.segments] == [5, 3]
    assert added.manifest.counts.store_rows > before.manifest.counts.store_rows
    # No file of the old version was rewritten (same inode, same mtime), none removed.
    for path, (inode, mtime) in old_files.items():
        assert (path.stat().st_ino, path.stat().st_mtime_ns) == (inode, mtime), path
    # The stored rows of the old documents are unchanged.
    np.testing.assert_array_equal(added.vectors(np.arange(5)), before.vectors(np.arange(5)))
    # BM25 statistics are per segment until compaction; then they cover every document.
    texts = [d.joined for d in corpus(8)]
    np.testing.assert_allclose(
        added.segments[1].bm25.scores(QUERIES), BM25.fit(texts[5:]).scores(QUERIES)
    )
    compacted = added.compact()
    assert [s.size for s in compacted.segments] == [8]
    np.testing.assert_allclose(
        compacted.segments[0].bm25.scores(QUERIES), BM25.fit(texts).scores(QUERIES)
    )
    # The new documents rerank with no live encode but the query's.
    for index in (added, compacted):
        reranker = Reranker(index, encoder)
        scored = reranker.score(["knight and bishop"], [["d6", "d1", "d7"]])
        assert scored.stats.index_misses == 0
        assert scored.stats.program_encodes == 0
    assert Index.load(tmp_path / "ix", verify=True).manifest.counts.documents == 8
    assert leftovers(tmp_path) == []


def test_add_matches_a_fresh_build(tmp_path):
    encoder = HashingEncoder()
    build(tmp_path / "ix", "SentMaxSim", docs=corpus(5), encoder=encoder)
    added = Index.load(tmp_path / "ix").add(corpus(3, start=5), encoder=encoder)
    fresh = build(tmp_path / "fresh", "SentMaxSim", docs=corpus(8), encoder=encoder)
    a = Reranker(added, encoder).score(QUERIES, [fresh.doc_ids] * len(QUERIES))
    b = Reranker(fresh, encoder).score(QUERIES, [fresh.doc_ids] * len(QUERIES))
    for x, y in zip(a.scores, b.scores, strict=True):
        np.testing.assert_allclose(x, y, atol=1e-6)


def test_add_rejects_known_or_repeated_ids_and_keeps_the_old_index(tmp_path):
    encoder = HashingEncoder()
    index = build(tmp_path / "ix", "P0", docs=corpus(4), encoder=encoder)
    with pytest.raises(DatasetError, match="'d1' is already in the index"):
        index.add(corpus(2, start=1), encoder=encoder)
    with pytest.raises(DatasetError, match="duplicate document id 'd9'"):
        index.add([Document("d9", "", "a"), Document("d9", "", "b")], encoder=encoder)
    with pytest.raises(EncoderMismatchError):
        index.add(corpus(1, start=4), encoder=HashingEncoder(seed=1))
    assert Index.load(tmp_path / "ix", verify=True).manifest.counts.documents == 4


@pytest.mark.parametrize("step", ["publish_segment", "publish_manifest"])
def test_failed_add_leaves_the_old_version(tmp_path, monkeypatch, step):
    encoder = HashingEncoder()
    index = build(tmp_path / "ix", "SentMaxSim", docs=corpus(4), encoder=encoder)
    real = getattr(build_module, step)
    monkeypatch.setattr(build_module, step, _raise)
    with pytest.raises(RuntimeError, match="interrupted"):
        index.add(corpus(2, start=4), encoder=encoder)
    assert Index.load(tmp_path / "ix", verify=True).manifest.counts.documents == 4
    assert leftovers(tmp_path) == []
    # A segment published but never listed is ignored, and swept by the next addition.
    on_disk = sorted(p.name for p in (tmp_path / "ix" / "segments").iterdir())
    assert on_disk == (["000000", "000001"] if step == "publish_manifest" else ["000000"])
    monkeypatch.setattr(build_module, step, real)
    added = index.add(corpus(2, start=4), encoder=encoder)
    assert [s.name for s in added.manifest.segments] == ["000000", "000001"]
    left = sorted(p.name for p in (tmp_path / "ix" / "segments").iterdir())
    assert left == ["000000", "000001"]


def test_build_replaces_without_renameat2_too(tmp_path, monkeypatch):
    encoder = HashingEncoder()
    build(tmp_path / "ix", "P0", docs=corpus(4), encoder=encoder)
    monkeypatch.setattr(directories, "exchange", lambda a, b: False)  # two renames instead
    again = Index.build(tmp_path / "ix", corpus(6), encoder=encoder, program="P0", replace=True)
    assert Index.load(tmp_path / "ix", verify=True).doc_ids == again.doc_ids
    assert len(again.doc_ids) == 6
    assert leftovers(tmp_path) == []


def _raise(*args, **kwargs):
    raise RuntimeError("interrupted")


def test_cli_build_and_add_on_corpus_files(tmp_path, monkeypatch, capsys):
    # The CLI loads encoders by name: point the fake's name at the registry for this test.
    import embedding_ttc.cli.common as cli

    monkeypatch.setattr(cli, "build_encoder", lambda *a, **k: HashingEncoder())
    first = tmp_path / "a.tsv"
    first.write_text("".join(f"d{i}\t{t}\t{x}\n" for i, (t, x) in enumerate(TEXTS[:5])))
    more = tmp_path / "b.jsonl"
    lines = [json.dumps({"_id": f"e{i}", "text": x}) + "\n" for i, (_, x) in enumerate(TEXTS[5:])]
    more.write_text("".join(lines))
    out = tmp_path / "ix"
    argv = ["index", "build", "--program", "SentMaxSim", "--corpus", str(first)]
    assert deploy_main([*argv, "--out", str(out), "--no-progress"]) == 0
    assert "built" in capsys.readouterr().err
    assert deploy_main(["index", "add", str(out), "--corpus", str(more), "--no-progress"]) == 0
    index = Index.load(out, verify=True)
    assert index.doc_ids[-1] == "e2"
    assert index.manifest.source == f"corpus:{first}"
    # Pseudo-queries from the corpus were used for the recording pass (P0 stores none).
    assert deploy_main([*argv, "--out", str(out), "--no-progress"]) == 2
    assert "already exists" in capsys.readouterr().err


def test_cli_reads_a_pyserini_corpus_and_refuses_a_textless_one(tmp_path, monkeypatch, capsys):
    import embedding_ttc.cli.common as cli

    monkeypatch.setattr(cli, "build_encoder", lambda *a, **k: HashingEncoder())
    pyserini = tmp_path / "p.jsonl"
    lines = [json.dumps({"id": f"d{i}", "contents": x}) for i, (_, x) in enumerate(TEXTS[:4])]
    pyserini.write_text("\n".join(lines) + "\n")
    out = tmp_path / "ix"
    build = ["index", "build", "--program", "P0", "--out", str(out), "--no-progress"]
    assert deploy_main([*build, "--corpus", str(pyserini)]) == 0
    index = Index.load(out, verify=True)
    assert index.texts(range(4)) == [x for _, x in TEXTS[:4]]  # not empty documents
    before = sorted(str(p.relative_to(out)) for p in out.rglob("*"))

    other = tmp_path / "o.jsonl"  # another shape: refused unless its fields are named
    other.write_text(json.dumps({"_id": "n1", "body": "Owls hunt at night."}) + "\n")
    capsys.readouterr()
    assert deploy_main([*build, "--force", "--corpus", str(other)]) == 2
    assert f"{other}:1: no text field 'text'" in capsys.readouterr().err
    add = ["index", "add", str(out), "--no-progress", "--corpus", str(other)]
    assert deploy_main(add) == 2
    assert f"{other}:1: no text field 'text'" in capsys.readouterr().err
    # Neither failure touched the index.
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == before
    assert Index.load(out, verify=True).manifest.counts.documents == 4

    assert deploy_main([*add, "--text-field", "body"]) == 0
    assert Index.load(out, verify=True).texts([4]) == ["Owls hunt at night."]

    mixed = tmp_path / "m.jsonl"
    mixed.write_text(
        "".join(json.dumps(r) + "\n" for r in ({"_id": "n2", "text": "Glaciers."}, {"_id": "n3"}))
    )
    capsys.readouterr()
    assert deploy_main(["index", "add", str(out), "--no-progress", "--corpus", str(mixed)]) == 2
    assert (
        deploy_main(
            ["index", "add", str(out), "--no-progress", "--corpus", str(mixed), "--skip-invalid"]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "skipped 1 invalid record(s)" in err and "added 1 documents" in err
    assert Index.load(out, verify=True).doc_ids[-1] == "n2"
