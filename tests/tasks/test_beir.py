import gzip
import json
from pathlib import Path

import pytest

from embedding_ttc.errors import DatasetError
from embedding_ttc.tasks.beir import load_beir_folder


def write_task(root: Path, corpus, queries, qrels: str, stats=None, gz=False) -> Path:
    (root / "qrels").mkdir(parents=True)
    lines = lambda rows: "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)  # noqa: E731
    if gz:
        with gzip.open(root / "corpus.jsonl.gz", "wt", encoding="utf-8") as fh:
            fh.write(lines(corpus))
    else:
        (root / "corpus.jsonl").write_text(lines(corpus), encoding="utf-8")
    (root / "queries.jsonl").write_text(lines(queries), encoding="utf-8")
    (root / "qrels" / "test.tsv").write_text(qrels, encoding="utf-8")
    if stats is not None:
        (root / "STATS.json").write_text(json.dumps(stats))
    return root


CORPUS = [
    {"_id": "d1", "title": "Title", "text": "alpha"},
    {"_id": "d2", "title": "", "text": "beta"},
    {"_id": "d3", "text": "gamma"},
]
QUERIES = [
    {"_id": "q1", "text": "first"},
    {"_id": "q2", "text": "second"},
    {"_id": "q3", "text": "x"},
]
QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\nq2\td3\t2\n"


@pytest.mark.parametrize("gz", [False, True])
def test_plain_and_gzipped(tmp_path: Path, gz: bool):
    task = load_beir_folder(write_task(tmp_path / "t", CORPUS, QUERIES, QRELS, gz=gz))
    assert task.name == "t" and task.doc_ids == ["d1", "d2", "d3"]
    assert task.doc_texts == ["Title alpha", "beta", "gamma"]  # MTEB's title + " " + text
    assert task.query_ids == ["q1", "q2"]  # q3 has no judgement
    assert task.qrels == {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
    assert task.pools is None
    assert task.warnings == ["1 queries without judgements not evaluated"]


def test_pool_task_ranks_its_qrels_rows(tmp_path: Path):
    task = load_beir_folder(
        write_task(tmp_path / "p", CORPUS, QUERIES, QRELS, stats={"pool": True})
    )
    assert task.pools == {"q1": ["d1", "d2"], "q2": ["d3"]}


def test_malformed_json_names_file_and_line(tmp_path: Path):
    root = write_task(
        tmp_path / "t", [CORPUS[0], '{"_id": "d2", "text": ', CORPUS[2]], QUERIES, QRELS
    )
    with pytest.raises(DatasetError, match=r"corpus.jsonl:2: not valid JSON"):
        load_beir_folder(root)


def test_a_json_error_message_is_whole_with_its_column(tmp_path: Path):
    # A raw tab inside a string: json's own message is "Invalid control character at".
    root = write_task(
        tmp_path / "t", [CORPUS[0], '{"_id": "d2", "text": "a\tb"}', CORPUS[2]], QUERIES, QRELS
    )
    with pytest.raises(DatasetError) as raised:
        load_beir_folder(root)
    assert str(raised.value).endswith(
        "corpus.jsonl:2: not valid JSON (Invalid control character at column 25)"
    )


def test_a_malformed_stats_file_names_line_and_column(tmp_path: Path):
    root = write_task(tmp_path / "t", CORPUS, QUERIES, QRELS)
    (root / "STATS.json").write_text('{"pool": true,\n "n": }')
    with pytest.raises(DatasetError) as raised:
        load_beir_folder(root)
    assert str(raised.value).endswith(
        "STATS.json: not valid JSON (Expecting value at line 2, column 7)"
    )


def test_duplicate_id_is_an_error(tmp_path: Path):
    root = write_task(tmp_path / "t", [*CORPUS, {"_id": "d1", "text": "again"}], QUERIES, QRELS)
    with pytest.raises(
        DatasetError, match=r"corpus.jsonl:4: duplicate id 'd1' \(first at line 1\)"
    ):
        load_beir_folder(root)


def test_unknown_ids_in_qrels_are_dropped_and_counted(tmp_path: Path):
    qrels = QRELS + "q1\tnope\t1\nq9\td1\t1\nq2\tgone\t1\n"
    task = load_beir_folder(write_task(tmp_path / "t", CORPUS, QUERIES, qrels))
    assert "2 qrels rows dropped: unknown corpus ids" in task.warnings
    assert "1 qrels rows dropped: unknown query ids" in task.warnings
    assert task.qrels["q1"] == {"d1": 1, "d2": 0}


def test_bad_grade_and_bad_row(tmp_path: Path):
    root = write_task(tmp_path / "a", CORPUS, QUERIES, QRELS + "q1\td3\thigh\n")
    with pytest.raises(DatasetError, match=r"test.tsv:5: grade 'high' is not an integer"):
        load_beir_folder(root)
    root = write_task(tmp_path / "b", CORPUS, QUERIES, QRELS + "q1 d3\n")
    with pytest.raises(DatasetError, match=r"test.tsv:5: expected 3 tab-separated fields"):
        load_beir_folder(root)


def test_empty_texts(tmp_path: Path):
    corpus = [*CORPUS, {"_id": "d4", "title": "", "text": "  "}]
    queries = [*QUERIES, {"_id": "q4", "text": ""}]
    task = load_beir_folder(write_task(tmp_path / "t", corpus, queries, QRELS + "q4\td4\t1\n"))
    assert "1 documents have empty text (kept)" in task.warnings
    assert "1 queries dropped: empty text" in task.warnings
    assert "q4" not in task.query_ids


@pytest.mark.parametrize(
    "record", [{"_id": "d4", "title": "T"}, {"id": "d4", "contents": "Pyserini's shape"}]
)
def test_a_corpus_record_without_text_is_an_error(tmp_path: Path, record):
    # Not an empty document: a task folder whose corpus is in another shape is refused.
    if "_id" not in record:
        record = {"_id": "d4", **record}
    root = write_task(tmp_path / "t", [*CORPUS, record], QUERIES, QRELS)
    with pytest.raises(DatasetError, match=r"corpus.jsonl:4: no 'text' field \(fields present"):
        load_beir_folder(root)


def test_missing_pieces(tmp_path: Path):
    with pytest.raises(DatasetError, match="does not exist"):
        load_beir_folder(tmp_path / "nope")
    root = write_task(tmp_path / "t", CORPUS, QUERIES, QRELS)
    (root / "queries.jsonl").unlink()
    with pytest.raises(DatasetError, match=r"no queries.jsonl"):
        load_beir_folder(root)


def test_self_hit_flag_and_integer_ids(tmp_path: Path):
    corpus = [{"_id": 1, "text": "one"}, {"_id": 2, "text": "two"}]
    queries = [{"_id": "1", "text": "one?"}]
    task = load_beir_folder(
        write_task(tmp_path / "t", corpus, queries, "1\t2\t1\n", stats={"exclude_self_hits": True})
    )
    assert task.doc_ids == ["1", "2"] and task.exclude_self_hits
