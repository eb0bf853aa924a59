"""A judged task from three files: the corpus read as ``index build`` reads it."""

from __future__ import annotations

import json

import pytest

from embedding_ttc.errors import DatasetError
from embedding_ttc.tasks.beir import load_judged_files


def write(tmp_path, corpus_lines, queries_text, qrels_text, corpus_name="docs.jsonl"):
    corpus = tmp_path / corpus_name
    corpus.write_text("\n".join(json.dumps(x) for x in corpus_lines) + "\n", encoding="utf-8")
    queries = tmp_path / "queries.tsv"
    queries.write_text(queries_text, encoding="utf-8")
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text(qrels_text, encoding="utf-8")
    return corpus, queries, qrels


def test_pyserini_corpus_tsv_queries_and_qrels_with_a_header(tmp_path):
    corpus, queries, qrels = write(
        tmp_path,
        [{"id": "a", "contents": "alpha text"}, {"id": "b", "contents": "beta text"}],
        "q1\tfind alpha\nq2\tfind beta\nq3\tunjudged\n",
        "query-id\tcorpus-id\tscore\nq1\ta\t1\nq2\tb\t2\nq2\tzz\t1\n",
    )
    task = load_judged_files("mine", corpus, queries, qrels)
    assert list(task.doc_ids) == ["a", "b"]
    assert list(task.doc_bodies) == ["alpha text", "beta text"]
    assert list(task.query_ids) == ["q1", "q2"]  # q3 has no judgement: not evaluated
    assert task.qrels == {"q1": {"a": 1}, "q2": {"b": 2}}
    assert any("unknown" in w or "zz" in w or "dropped" in w for w in task.warnings)


def test_the_corpus_fields_are_asked_as_index_build_asks_them(tmp_path):
    corpus, queries, qrels = write(
        tmp_path,
        [{"doc": "a", "body": "alpha", "head": "A"}],
        "q1\talpha\n",
        "q1\ta\t1\n",
    )
    task = load_judged_files(
        "mine", corpus, queries, qrels, id_field="doc", text_field="body", title_field="head"
    )
    assert (task.doc_titles[0], task.doc_bodies[0]) == ("A", "alpha")


def test_bad_files_are_named(tmp_path):
    corpus, queries, qrels = write(
        tmp_path, [{"_id": "a", "text": "x"}], "q1 no tab\n", "q1\ta\t1\n"
    )
    with pytest.raises(DatasetError, match=r"queries.tsv:1: expected 2 tab-separated fields"):
        load_judged_files("mine", corpus, queries, qrels)
    with pytest.raises(DatasetError, match=r"missing\.tsv does not exist"):
        load_judged_files("mine", corpus, tmp_path / "missing.tsv", qrels)
    queries.write_text("q1\talpha\n", encoding="utf-8")
    qrels.write_text("q1\ta\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"qrels.tsv:1: expected 3 tab-separated fields"):
        load_judged_files("mine", corpus, queries, qrels)
