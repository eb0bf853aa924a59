"""Corpus files: each shape read with its text, bad records refused or skipped and counted."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from embedding_ttc.errors import DatasetError
from embedding_ttc.tasks.corpus_records import Document, read_corpus_file


def jsonl(path: Path, *records: object) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_beir_shape_with_optional_and_empty_title(tmp_path):
    path = jsonl(
        tmp_path / "c.jsonl",
        {"_id": "a", "title": "T", "text": "x"},
        {"_id": "b", "title": "", "text": "y"},
        {"_id": 3, "text": "z"},
    )
    read = read_corpus_file(path)
    assert read.documents == [
        Document("a", "T", "x"),
        Document("b", "", "y"),
        Document("3", "", "z"),
    ]
    assert read.skipped == 0


def test_pyserini_shape_is_chosen_by_the_first_record(tmp_path):
    path = tmp_path / "c.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write(json.dumps({"id": "a", "contents": "cats purr"}) + "\n")
        fh.write(json.dumps({"id": "b", "contents": "dogs bark", "title": "ignored"}) + "\n")
    assert read_corpus_file(path).documents == [
        Document("a", "", "cats purr"),
        Document("b", "", "dogs bark"),
    ]


def test_a_pyserini_file_with_a_beir_record_is_refused_not_guessed(tmp_path):
    path = jsonl(tmp_path / "c.jsonl", {"id": "a", "contents": "x"}, {"_id": "b", "text": "y"})
    with pytest.raises(DatasetError, match=r"c.jsonl:2: missing or invalid id field 'id'"):
        read_corpus_file(path)


def test_explicit_fields(tmp_path):
    path = jsonl(
        tmp_path / "c.jsonl",
        {"docid": "a", "headline": "H", "body": "x", "title": "not used"},
        {"docid": "b", "body": "y"},
    )
    read = read_corpus_file(path, id_field="docid", text_field="body", title_field="headline")
    assert read.documents == [Document("a", "H", "x"), Document("b", "", "y")]
    # Without --title-field an explicit text field takes no title: nothing is guessed.
    read = read_corpus_file(path, id_field="docid", text_field="body")
    assert read.documents == [Document("a", "", "x"), Document("b", "", "y")]


def test_tsv_with_two_or_three_columns(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_text("id\ttext\na\tx y\nb\tT\tz\n", encoding="utf-8")
    assert read_corpus_file(path).documents == [Document("a", "", "x y"), Document("b", "T", "z")]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("c.jsonl", '{"_id": "a", "body": "x"}\n', "c.jsonl:1: no text field 'text' (beir shape"),
        ("c.jsonl", '{"_id": "a", "text": " "}\n', "c.jsonl:1: field 'text' is empty"),
        ("c.jsonl", '{"_id": "a", "text": 5}\n', "c.jsonl:1: field 'text' must be a string"),
        ("c.jsonl", '{"_id": "a", "title": 1, "text": "x"}\n', "field 'title' must be a string"),
        ("c.jsonl", '{"id": "a", "contents": ""}\n', "c.jsonl:1: field 'contents' is empty"),
        ("c.tsv", "a\tT\t\n", "c.tsv:1: field 'text' (column 3) is empty"),
        ("c.tsv", "a\n", "c.tsv:1: expected id<TAB>text or id<TAB>title<TAB>text, got 1"),
    ],
)
def test_bad_records_name_file_line_and_field(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DatasetError) as err:
        read_corpus_file(path)
    assert message in str(err.value)


def test_an_explicit_text_field_that_is_absent_is_named(tmp_path):
    path = jsonl(tmp_path / "c.jsonl", {"_id": "a", "text": "x"})
    with pytest.raises(DatasetError, match=r"c.jsonl:1: no text field 'body' \(custom shape"):
        read_corpus_file(path, text_field="body")


def test_skip_invalid_skips_and_counts(tmp_path):
    path = jsonl(
        tmp_path / "c.jsonl",
        {"_id": "a", "text": "x"},
        {"_id": "b"},
        {"_id": "c", "text": ""},
        {"_id": "d", "text": "y"},
    )
    read = read_corpus_file(path, skip_invalid=True)
    assert read.documents == [Document("a", "", "x"), Document("d", "", "y")]
    assert read.skipped == 2


def test_a_malformed_line_is_said_in_words_and_skippable(tmp_path):
    path = tmp_path / "c.jsonl"
    long = "y" * 1240
    path.write_text(
        '{"_id": "a", "text": "x"}\n'
        f'{{"_id": "b", "text": "{long}\n'  # the string never ends
        "[1, 2]\n"
        '{"_id": "c", "text": "z"}\n',
        encoding="utf-8",
    )
    with pytest.raises(DatasetError) as err:
        read_corpus_file(path)
    assert str(err.value) == (
        f"{path}: line 2 is not valid JSON: unterminated string starting at column 22"
    )
    read = read_corpus_file(path, skip_invalid=True)
    assert [d.id for d in read.documents] == ["a", "c"]
    assert read.skipped == 2  # the broken line and the line that is not an object


def test_a_line_that_is_not_an_object_is_named(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"_id": "a", "text": "x"}\n"just a string"\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"line 2 is not a JSON object \(a str instead\)"):
        read_corpus_file(path)


def test_skip_invalid_never_skips_a_record_without_an_id(tmp_path):
    path = jsonl(tmp_path / "c.jsonl", {"_id": "a", "text": "x"}, {"text": "y"})
    with pytest.raises(DatasetError, match=r"c\.jsonl:2: missing or invalid id field"):
        read_corpus_file(path, skip_invalid=True)


def test_field_names_do_not_apply_to_tsv(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_text("a\tx\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="field names apply to JSONL corpora, not TSV"):
        read_corpus_file(path, text_field="body")
