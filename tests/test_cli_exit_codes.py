"""``evaluate`` exits 1 when a requested program failed, after reporting what succeeded."""

import json
from pathlib import Path

import pytest

from embedding_ttc.cli import main

PROGRAMS = Path(__file__).resolve().parent / "program_files" / "programs"


def _evaluate(data: Path, out: Path, *files: Path) -> list[str]:
    return [
        *("evaluate", "--task", "aila_statutes", "--data-dir", str(data)),
        *("--encoder", "tokenlearn-static-64", "--no-progress", "--out", str(out)),
        *(a for f in files for a in ("--program-file", str(f))),
    ]


def test_an_only_program_file_with_a_syntax_error_exits_1(packaged_datasets, tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text("def program(Q, D, S, ctx)\n    return S\n")
    assert main([*_evaluate(packaged_datasets, tmp_path / "out", bad), "--json"]) == 1
    captured = capsys.readouterr()
    records = json.loads(captured.out)
    # P0, the default program, still ran: the baseline is reported beside the failure
    assert [(r["program"], r.get("status", "ok")) for r in records] == [
        ("P0", "ok"),
        ("bad", "rejected"),
    ]
    err = " ".join(captured.err.split())
    assert "evaluate: 1 of 2 requested program runs failed; the 1 that succeeded" in err


@pytest.mark.parametrize("name", ["wrong_shape", "raises"])
def test_a_failing_program_file_exits_1_and_the_others_are_written(
    packaged_datasets, tmp_path, capsys, name
):
    out = tmp_path / "out"
    files = (PROGRAMS / "valid_zscore.py", PROGRAMS / f"{name}.py")
    assert main(_evaluate(packaged_datasets, out, *files)) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert (
        f"evaluate: 1 of 3 requested program runs failed; the 2 that succeeded are reported "
        f"and written to {out}" in err
    )
    summary = [json.loads(x) for x in (out / "summary.jsonl").read_text().splitlines()]
    assert "valid_zscore" in {r["program"] for r in summary}


def test_every_program_file_passing_exits_0(packaged_datasets, tmp_path):
    argv = _evaluate(packaged_datasets, tmp_path / "out", PROGRAMS / "valid_zscore.py")
    assert main(argv) == 0
