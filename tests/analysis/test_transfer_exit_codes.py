"""``transfer`` exits non-zero when any cell it tried failed, after writing the others."""

from embedding_ttc.analysis.cells import CellKey, CellStore
from embedding_ttc.cli.analysis import main

from .cell_factory import smoke_transfer_argv

GOOD = '"""Scores reversed."""\n\n\ndef program(Q, D, S, ctx):\n    return -S\n'
BROKEN = '"""Raises."""\n\n\ndef program(Q, D, S, ctx):\n    raise ValueError("bad value 42")\n'


def test_a_program_file_that_now_fails_exits_1_though_its_old_cell_remains(
    packaged_datasets, tmp_path, capsys
):
    mine = tmp_path / "mine.py"
    mine.write_text(GOOD)
    out = tmp_path / "study"
    argv = smoke_transfer_argv(
        out, packaged_datasets, "--cache-dir", str(tmp_path / "cache"), "--no-progress",
        "--program-file", str(mine), programs="P0",
    )  # fmt: skip
    assert main(argv) == 0
    capsys.readouterr()
    mine.write_text(BROKEN)  # changed: its cell is recomputed, and that fails
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "transfer: 1 of 1 cells this run tried failed (listed above)" in err
    assert "bad value 42" in err
    store = CellStore(out)
    assert CellKey("tokenlearn-static-64", "aila_statutes", "P0") in store
