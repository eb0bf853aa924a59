"""The command line explains itself: every option has help; --json output is JSON alone."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from embedding_ttc.cli import build_parser, main


def _options_without_help(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options_without_help(sub, (*path, name))
        elif isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            continue
        elif not action.help:
            yield " ".join((*path, *(action.option_strings or [action.dest])))


def test_every_option_of_every_command_has_help_text():
    assert list(_options_without_help(build_parser())) == []


def test_every_command_has_a_one_line_help():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {a.dest: a.help for a in sub._choices_actions}
    assert set(helps) == set(sub.choices)
    assert all(helps.values()), [name for name, text in helps.items() if not text]


def test_evaluate_json_prints_only_json_and_no_chatter(tmp_path: Path, capsys, monkeypatch):
    """On the packaged quickstart task, without a data root: stdout is one JSON document."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("EMBEDDING_TTC_DATA", raising=False)
    argv = ["evaluate", "--task", "aila_statutes", "--program", "P0", "--json"]
    assert main([*argv, "--cache-dir", str(tmp_path / "cache")]) == 0
    out, err = capsys.readouterr()
    assert err == ""  # no progress, warning or table on stderr either
    records = json.loads(out)
    assert [r["program"] for r in records] == ["P0"]


@pytest.mark.slow  # the evaluate command end to end through a pipe (about 40 s)
def test_evaluate_tables_piped_keep_every_name_whole(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    argv = ["evaluate", "--suite", "quickstart", "--program", "P0", "--program", "BM25DenseRRF"]
    assert main([*argv, "--no-progress", "--cache-dir", str(tmp_path / "cache")]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("encoder\ttask\tprogram\tnDCG@10")
    names = {tuple(line.split("\t")[:3]) for line in lines[1:7]}
    assert ("all-MiniLM-L6-v2", "legal_summarization", "BM25DenseRRF") in names
    # the suite table is Markdown whose rows are never wrapped
    row = next(line for line in lines if line.startswith("| BM25DenseRRF |"))
    assert row.count("|") == 9  # program, c, Δ, W/T/L, nDCG@10 and the three tasks
