"""Durable JSONL records: whole-line appends, torn-tail recovery, named errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

from embedding_ttc.durable import append_record, cut_torn_tail, read_records
from embedding_ttc.errors import EmbeddingTTCError


class Event(BaseModel):
    model_config = ConfigDict(extra="forbid")

    n: int
    text: str = ""


class EventError(EmbeddingTTCError):
    pass


def test_appends_read_back_in_order_and_blank_lines_are_skipped(tmp_path: Path):
    path = tmp_path / "deep" / "log.jsonl"
    assert read_records(path, Event, EventError, "an event") == []
    append_record(path, Event(n=1, text="é\nline"))
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("\n")
    append_record(path, Event(n=2))
    assert read_records(path, Event, EventError, "an event") == [
        Event(n=1, text="é\nline"),
        Event(n=2),
    ]


def test_a_torn_tail_is_skipped_on_reading_and_cut_before_the_next_append(tmp_path: Path):
    path = tmp_path / "log.jsonl"
    append_record(path, Event(n=1))
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('{"n": 2')  # a kill mid-append
    before = path.read_bytes()
    assert read_records(path, Event, EventError, "an event") == [Event(n=1)]
    assert path.read_bytes() == before  # reading never writes
    append_record(path, Event(n=3))
    assert read_records(path, Event, EventError, "an event") == [Event(n=1), Event(n=3)]


def test_cut_torn_tail_keeps_whole_lines_and_cuts_a_file_of_one_torn_line(tmp_path: Path):
    path = tmp_path / "log.jsonl"
    assert cut_torn_tail(path) is False  # absent
    path.write_bytes(b"")
    assert cut_torn_tail(path) is False
    path.write_bytes(b'{"n": 1}\n')
    assert cut_torn_tail(path) is False
    path.write_bytes(b"x" * 200_000)  # longer than one scan block, no newline at all
    assert cut_torn_tail(path) is True
    assert path.read_bytes() == b""
    path.write_bytes(b'{"n": 1}\n' + b"y" * 100_000)
    assert cut_torn_tail(path) is True
    assert path.read_bytes() == b'{"n": 1}\n'


def test_a_bad_line_in_the_middle_is_an_error_naming_file_line_and_field(tmp_path: Path):
    path = tmp_path / "log.jsonl"
    path.write_text('{"n": 1}\n{"n": 2, "surprise": 1}\n{"n": 3}\n', encoding="utf-8")
    with pytest.raises(EventError, match=r"log\.jsonl:2: not an event \(surprise: Extra inputs"):
        read_records(path, Event, EventError, "an event")
    path.write_text('{"n": 1}\nnot json\n{"n": 3}\n', encoding="utf-8")
    with pytest.raises(EventError, match=r"log\.jsonl:2: not an event \(line: Invalid JSON"):
        read_records(path, Event, EventError, "an event")
