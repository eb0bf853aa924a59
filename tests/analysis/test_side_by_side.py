"""Two runs of one matrix side by side: paired per-query gaps, unchanged programs, the CLI."""

import json

import pytest

from embedding_ttc.analysis.cells import BootstrapConfig, CellStore
from embedding_ttc.analysis.inputs import scan_cells
from embedding_ttc.analysis.side_by_side import SideBySide, SideBySideError, side_by_side_grids
from embedding_ttc.cli import main

from .cell_factory import cell, smoke_transfer_argv

BOOT = BootstrapConfig(resamples=200)


def scored(encoder, task, program, scores, baseline, tokenizer):
    """A cell over queries q0..qn with these program and P0 scores, made under ``tokenizer``."""
    made = cell(encoder, task, program, 0.0)
    queries = [f"q{i}" for i in range(len(scores))]
    delta = (sum(scores) - sum(baseline)) / len(scores)
    return made.model_copy(
        update={
            "per_query": dict(zip(queries, scores, strict=True)),
            "baseline_per_query": dict(zip(queries, baseline, strict=True)),
            "n_queries": len(scores),
            "comparison": made.comparison.model_copy(update={"delta_ndcg_at_10": delta}),
            "tokenizer": tokenizer,
        }
    )


BASE = [0.5, 0.4, 0.3, 0.2]


def runs():
    unicode = [
        scored("E", "zh", "BM25", [0.9, 0.8, 0.7, 0.6], BASE, "unicode"),
        scored("E", "ru", "BM25", [0.5, 0.5, 0.5, 0.5], BASE, "unicode"),
        scored("E", "zh", "SoftCentroid", [0.6, 0.4, 0.3, 0.2], BASE, "unicode"),
        scored("E", "th", "BM25", [0.1, 0.1, 0.1, 0.1], BASE, "unicode"),  # not in the other
    ]
    ascii_ = [
        scored("E", "zh", "BM25", [0.0, 0.0, 0.0, 0.0], BASE, "ascii"),
        scored("E", "ru", "BM25", [0.5, 0.5, 0.5, 0.5], BASE, "ascii"),
        scored("E", "zh", "SoftCentroid", [0.6, 0.4, 0.3, 0.2], BASE, "ascii"),
    ]
    return unicode, ascii_


def test_only_programs_that_moved_are_paired_and_each_gap_is_per_query():
    unicode, ascii_ = runs()
    s = SideBySide.from_cells(unicode, ascii_, config=BOOT)
    assert (s.label_a, s.label_b) == ("unicode", "ascii")
    assert s.programs == ("BM25",) and s.unchanged == ("SoftCentroid",)
    assert s.tasks == ("zh", "ru") and s.encoders == ("E",)  # th is in one run only
    zh, ru = s.get("E", "zh", "BM25"), s.get("E", "ru", "BM25")
    assert zh is not None and ru is not None and s.get("E", "zh", "SoftCentroid") is None
    assert zh.gap == pytest.approx(0.75) and zh.stats.significant_win
    assert zh.delta_a == pytest.approx(0.4) and zh.delta_b == pytest.approx(-0.35)
    assert ru.gap == 0.0 and not (ru.stats.significant_win or ru.stats.significant_loss)
    grids = side_by_side_grids(s)
    gaps = grids["gaps"].to_markdown()
    assert "| BM25 | E | +0.7500* | +0.0000 |" in gaps
    assert "identical in every cell: SoftCentroid" in grids["gaps"].title
    assert grids["cells"].header[3:6] == ("Δ vs P0 (unicode)", "Δ vs P0 (ascii)", "unicode − ascii")


def test_runs_without_a_shared_cell_or_over_other_queries_are_refused():
    unicode, ascii_ = runs()
    with pytest.raises(SideBySideError, match="share no cell"):
        SideBySide.from_cells(unicode[3:], ascii_)
    fewer = scored("E", "zh", "BM25", [0.1, 0.1, 0.1], BASE[:3], "ascii")
    with pytest.raises(SideBySideError, match="E · zh · BM25: the two runs scored different"):
        SideBySide.from_cells(unicode, [fewer])
    labelled = SideBySide.from_cells(unicode, ascii_, labels=("new", "old"), config=BOOT)
    assert (labelled.label_a, labelled.label_b) == ("new", "old")


def test_report_against_writes_the_gaps_beside_the_tables(tmp_path, packaged_datasets, capsys):
    unicode, ascii_ = tmp_path / "unicode", tmp_path / "ascii"
    for out, tokenizer in ((unicode, "unicode"), (ascii_, "ascii")):
        argv = smoke_transfer_argv(out, packaged_datasets, programs="P0,BM25,SoftCentroid")
        assert main([*argv, "--tokenizer", tokenizer]) == 0
    # English: the tokenizers agree, so only a cell made to differ shows up.
    (bm25,) = [c for c in scan_cells(ascii_) if c.program == "BM25"]
    per_query = {q: 0.0 for q in bm25.per_query}
    path = CellStore(ascii_).path(bm25.key)
    path.write_text(json.dumps({**json.loads(path.read_text()), "per_query": per_query}))
    capsys.readouterr()
    assert main(["report", str(unicode), "--against", str(ascii_)]) == 0
    err = capsys.readouterr().err
    assert "1 programs differ (BM25), 2 identical" in err
    table = (unicode / "tables" / "against-ascii.md").read_text()
    assert "nDCG@10 under unicode minus under ascii" in table and "| BM25 |" in table
    assert (unicode / "tables" / "against-ascii-cells.csv").exists()
    assert main(["report", str(unicode), "--against", str(tmp_path / "nothing")]) == 2
    assert "share no cell" in capsys.readouterr().err


def test_encoders_and_tasks_follow_the_order_asked_and_only_where_a_pair_is():
    unicode, ascii_ = runs()
    other = [
        scored("F", "zh", "SoftCentroid", [0.6, 0.4, 0.3, 0.2], BASE, "unicode"),  # unchanged
    ]
    s = SideBySide.from_cells(
        [*other, *unicode], [*other, *ascii_], config=BOOT, order=["ru", "zh"]
    )
    assert s.tasks == ("ru", "zh") and s.encoders == ("E",)  # F has no program that moved
