"""TREC run files: escaped ids, and a write that replaces the file whole or not at all."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from embedding_ttc.evaluation.trec import escape_id, unescape_id, write_run


def test_ids_with_whitespace_or_percent_round_trip():
    for identifier in ("plain", "two words", "tab\there", "50%", "a%20b"):
        field = escape_id(identifier)
        assert " " not in field and "\t" not in field
        assert unescape_id(field) == identifier
    assert escape_id("plain") == "plain"


def test_write_run_writes_one_line_per_document(tmp_path: Path):
    path = tmp_path / "run.trec"
    write_run(path, [("q 1", ["d1", "d2"], [0.5, 0.25])], "P0")
    assert path.read_text(encoding="utf-8") == "q%201 Q0 d1 1 0.5 P0\nq%201 Q0 d2 2 0.25 P0\n"
    assert [p.name for p in tmp_path.iterdir()] == ["run.trec"]


def test_a_failed_write_leaves_the_old_run_and_no_temporary(tmp_path: Path):
    path = tmp_path / "run.trec"
    write_run(path, [("q", ["d1"], [1.0])], "old")

    def broken() -> Iterator[tuple[str, list[str], list[float]]]:
        yield ("q", ["d2"], [2.0])
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError, match="interrupted"):
        write_run(path, broken(), "new")
    assert path.read_text(encoding="utf-8") == "q Q0 d1 1 1 old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["run.trec"]
