"""The transfer report computed from hand-made cells: W/T/L, pooled Δ, oracle, PRF, fusion."""

import pytest

from embedding_ttc.analysis.cells import CellKey
from embedding_ttc.analysis.tables import sections
from embedding_ttc.analysis.transfer_report import TransferReport
from embedding_ttc.evaluation.comparison import WTL

from .cell_factory import cell as make_cell


def cell(encoder, task, program, delta, sig=0, base=100, prog=50, p=0.5):
    """A hand-made cell: one query whose difference is ``delta``; ``sig`` = +1 win, -1 loss."""
    return make_cell(encoder, task, program, delta, sig=sig, base=base, prog=prog, p=p)


CELLS = [
    # X on the held-out cells (A, B) x (t1, t2, t3)
    cell("A", "t1", "X", 0.01),
    cell("A", "t2", "X", -0.0005),  # a tie at ±0.001
    cell("A", "t3", "X", -0.02, sig=-1),
    cell("B", "t1", "X", 0.03, sig=+1),
    cell("B", "t2", "X", 0.002),
    cell("B", "t3", "X", -0.01),
    # Y, with (A, t3) missing and unequal base calls
    cell("A", "t1", "Y", 0.05, base=100, prog=100),
    cell("A", "t2", "Y", 0.004, base=300, prog=0),
    cell("B", "t1", "Y", -0.01, base=300, prog=0),
    cell("B", "t2", "Y", 0.003, base=300, prog=0),
    cell("B", "t3", "Y", 0.001, base=300, prog=0),
    # the discovery column: A on d1, d2
    cell("A", "d1", "X", 0.01),
    cell("A", "d2", "X", -0.01),
    cell("A", "d1", "Y", 0.1),
    cell("A", "d2", "Y", 0.0),
    # outside the layout: ignored
    cell("C", "t1", "X", 0.5),
]


def wtl(wins, ties, losses):
    return WTL(wins=wins, ties=ties, losses=losses)


def report(**kwargs):
    layout = {
        "encoders": ["A", "B"],
        "tasks": ["t1", "t2", "t3"],
        "programs": ["P0", "X", "Y"],
        "discovery_encoder": "A",
        "discovery_tasks": ["d1", "d2"],
    }
    return TransferReport.from_cells(CELLS, **{**layout, **kwargs})


def test_table2_layout_counts():
    r = report()
    assert r.programs == ("X", "Y")  # P0 gets no line
    x, y = r.line("X"), r.line("Y")
    assert x.discovery == wtl(1, 0, 1) and y.discovery == wtl(1, 1, 0)
    assert x.heldout == {"A": wtl(1, 1, 1), "B": wtl(2, 0, 1)}
    assert y.heldout == {"A": wtl(2, 0, 0), "B": wtl(1, 1, 1)}
    assert x.cost_ratio == pytest.approx(1.5)
    assert y.cost_ratio == pytest.approx(1400 / 1300)  # summed calls, not a mean of ratios


def test_pooled_median_win_rate_and_unanimity():
    r = report()
    x, y = r.line("X"), r.line("Y")
    assert x.n_cells == 6
    assert x.median_delta == pytest.approx((-0.0005 + 0.002) / 2)
    assert x.mean_delta == pytest.approx(0.0115 / 6)
    assert x.win_rate == pytest.approx(3 / 6)
    assert x.unanimous_positive == ("t1",) and x.unanimous_negative == ("t3",)
    assert y.n_cells == 5
    assert y.median_delta == pytest.approx(0.003)
    assert y.win_rate == pytest.approx(3 / 5)
    # t3 lacks Y on A: no unanimity claimed either way.
    assert y.unanimous_positive == ("t2",) and y.unanimous_negative == ()


def test_significance_per_encoder():
    x = report().line("X")
    assert x.significant_wins == {"A": 0, "B": 1}
    assert x.significant_losses == {"A": 1, "B": 0}


def test_oracle_over_the_program_set():
    o = report().oracle
    best = {(c.encoder, c.task): (c.program, c.delta) for c in o.cells}
    assert best == {
        ("A", "t1"): ("Y", 0.05),
        ("A", "t2"): ("Y", 0.004),
        ("A", "t3"): ("X", -0.02),
        ("B", "t1"): ("X", 0.03),
        ("B", "t2"): ("Y", 0.003),
        ("B", "t3"): ("Y", 0.001),
    }
    a, b = o.per_encoder
    assert (a.lifted, a.cells, b.lifted, b.cells) == (2, 3, 2, 3)  # 0.001 is not a lift
    assert a.mean_best_delta == pytest.approx((0.05 + 0.004 - 0.02) / 3)
    assert o.lifted == 4
    only_x = report(oracle_programs=["X"]).oracle
    assert [e.lifted for e in only_x.per_encoder] == [1, 2]


def test_missing_cells_are_listed_and_outsiders_ignored():
    r = report()
    p0 = [CellKey(e, t, "P0") for e in "AB" for t in ("t1", "t2", "t3")]
    disc_p0 = [CellKey("A", d, "P0") for d in ("d1", "d2")]  # the discovery column's baseline
    assert r.missing == (*p0[:3], CellKey("A", "t3", "Y"), *p0[3:], *disc_p0)  # layout order
    assert all(c.encoder != "C" for c in r.cells)
    assert r.prf is None and r.fusion is None


def test_soft_centroid_against_the_best_rocchio_cell_by_cell():
    cells = [
        cell("A", "t1", "SoftCentroid", 0.05, p=0.001),
        cell("A", "t2", "SoftCentroid", -0.01),
        cell("A", "t1", "Rocchio:K=2,beta=0.1", 0.01),
        cell("A", "t2", "Rocchio:K=2,beta=0.1", 0.0),
        cell("A", "t1", "Rocchio:K=3,beta=0.5", 0.03),
        cell("A", "t2", "Rocchio:K=3,beta=0.5", -0.02),
    ]
    progs = ["SoftCentroid", "Rocchio:K=2,beta=0.1", "Rocchio:K=3,beta=0.5"]
    r = TransferReport.from_cells(cells, encoders=["A"], tasks=["t1", "t2"], programs=progs)
    assert r.prf is not None
    assert r.prf.rocchio_programs == tuple(progs[1:])
    t1, t2 = r.prf.cells
    assert (t1.best_rocchio, t1.rocchio_delta) == ("Rocchio:K=3,beta=0.5", 0.03)
    assert t1.advantage == pytest.approx(0.02) and t1.soft_centroid_p_value == 0.001
    assert (t2.best_rocchio, t2.advantage) == ("Rocchio:K=2,beta=0.1", pytest.approx(-0.01))
    (enc,) = r.prf.per_encoder
    assert (enc.cells, enc.soft_centroid_ahead) == (2, 1)
    assert enc.mean_rocchio_delta == pytest.approx(0.015)
    assert enc.mean_soft_centroid_delta == pytest.approx(0.02)
    assert enc.mean_advantage == pytest.approx(0.005)
    assert "prf" in sections(r)


def test_fusion_win_rates_side_by_side():
    deltas = {
        "BM25DenseRRF": {"A": [0.01, -0.01], "B": [-0.02, -0.03]},
        "LexicalHybridRRF": {"A": [0.02, 0.01], "B": [0.0, 0.005]},
    }
    cells = [
        cell(e, t, p, d)
        for p, per in deltas.items()
        for e, ds in per.items()
        for t, d in zip(["t1", "t2"], ds, strict=True)
    ]
    r = TransferReport.from_cells(
        cells, encoders=["A", "B"], tasks=["t1", "t2"], programs=list(deltas)
    )
    assert r.fusion is not None
    bm25, lex = r.fusion.lines
    assert (bm25.pooled_win_rate, bm25.win_rate) == (0.25, {"A": 0.5, "B": 0.0})
    assert bm25.pooled_median_delta == pytest.approx(-0.015)
    assert (lex.pooled_win_rate, lex.win_rate) == (0.75, {"A": 1.0, "B": 0.5})
    assert lex.median_delta["B"] == pytest.approx(0.0025)
    md = sections(r)["fusion"].to_markdown()
    assert "| BM25DenseRRF | 4 | 25% | -0.0150 | 50% | 0% |" in md


def test_best_rocchio_counts_the_default_once_when_its_grid_point_is_there():
    from embedding_ttc.analysis.comparisons import DEFAULT_ROCCHIO

    made = []
    for p, d in (("P0", 0.0), ("SoftCentroid", 0.01), ("Rocchio", 0.05), (DEFAULT_ROCCHIO, 0.05)):
        made.append(cell("enc", "scifact", p, d))
    made.append(cell("enc", "scifact", "Rocchio:K=2,beta=0.1", 0.02))
    progs = ["SoftCentroid", "Rocchio", DEFAULT_ROCCHIO, "Rocchio:K=2,beta=0.1"]
    report = TransferReport.from_cells(made, encoders=["enc"], tasks=["scifact"], programs=progs)
    assert "best of 2 Rocchio configuration(s)" in sections(report)["prf"].title


def test_the_oracle_defaults_to_the_frontier_programs_in_the_matrix():
    from embedding_ttc.analysis.transfer_report import default_oracle
    from embedding_ttc.programs.catalog import FRONTIER, resolve_program_names

    assert resolve_program_names(["frontier"]) == list(FRONTIER) and len(FRONTIER) == 12
    progs = ["P0", "BM25", "SentMaxSim", "Rocchio:K=2,beta=0.1", "LearnedHead", "FisherStability"]
    assert default_oracle(progs) == ["SentMaxSim", "FisherStability"]
    assert default_oracle(["P0", "BM25", "LearnedHead", "SoftCentroid"]) == ["BM25", "SoftCentroid"]


def test_significance_after_the_benjamini_hochberg_correction():
    layout = {"encoders": ["A", "B"], "tasks": ["t1", "t2", "t3"], "programs": ["X", "Y"]}

    def with_p(p_loss, p_win):  # X's significant loss (A, t3) and win (B, t1) at these p
        replaced = {
            CellKey("A", "t3", "X"): cell("A", "t3", "X", -0.02, sig=-1, p=p_loss),
            CellKey("B", "t1", "X"): cell("B", "t1", "X", 0.03, sig=+1, p=p_win),
        }
        return TransferReport.from_cells([replaced.get(c.key, c) for c in CELLS], **layout)

    # The family is the 11 held-out cells of X and Y (the discovery column is not tested);
    # the other nine have p = 0.5.
    r = with_p(0.01, 0.01)
    assert len(r.adjusted_p) == 11
    assert CellKey("A", "d1", "X") not in r.adjusted_p
    # Two cells at p = 0.01 adjust to 11 × 0.01 / 2 = 0.055 > 0.05: neither stays.
    assert r.adjusted_p[CellKey("A", "t3", "X")] == pytest.approx(0.055)
    x = r.line("X")
    assert x.significant_wins == {"A": 0, "B": 1} and x.significant_losses == {"A": 1, "B": 0}
    assert x.corrected_wins == {"A": 0, "B": 0} and x.corrected_losses == {"A": 0, "B": 0}
    # The win at p = 0.001 adjusts to 11 × 0.001 = 0.011 and stays; the loss, to 0.055.
    r2 = with_p(0.01, 0.001)
    assert r2.adjusted_p[CellKey("B", "t1", "X")] == pytest.approx(0.011)
    x2 = r2.line("X")
    assert x2.corrected_wins == {"A": 0, "B": 1} and x2.corrected_losses == {"A": 0, "B": 0}


def test_worst_query_query_time_cost_and_head_to_head_against_the_hybrid():
    hybrid = [
        cell("A", "t1", "BM25DenseRRF", 0.02),  # X 0.01: lost
        cell("A", "t2", "BM25DenseRRF", -0.0008),  # X -0.0005: tied
        cell("A", "t3", "BM25DenseRRF", -0.03),  # X -0.02: won
        cell("B", "t1", "BM25DenseRRF", 0.0),  # X 0.03: won
        # (B, t2) and (B, t3) missing: not counted
    ]
    r = TransferReport.from_cells(
        CELLS + hybrid,
        encoders=["A", "B"],
        tasks=["t1", "t2", "t3"],
        programs=["P0", "X", "BM25DenseRRF"],
        discovery_encoder=None,
        discovery_tasks=[],
        validation={"X": 0.031, "g0009": 0.5},  # a discovered X; g0009 not reported
    )
    x, hybrid_line = r.line("X"), r.line("BM25DenseRRF")
    assert x.versus_reference == wtl(2, 1, 1)
    assert hybrid_line.versus_reference is None  # not against itself
    assert x.worst_query == pytest.approx(-0.02)  # each hand-made cell has one query
    assert x.query_time_cost_ratio == pytest.approx(50.0)  # Σ query calls / Σ queries
    assert x.validation_delta == 0.031 and hybrid_line.validation_delta is None
    row = next(ln for ln in sections(r)["programs"].to_markdown().splitlines() if "| X |" in ln)
    assert (
        row.startswith("| X | 6 | 50.00 | +0.0310 |") and "| 2/1/1 | 0/0 |" in row
    )  # p = 0.5: none survives BH


def test_deep_losses_count_the_queries_below_minus_half():
    cells = [
        cell("A", "t1", "X", -0.6),  # a deep loss
        cell("A", "t2", "X", -0.5),  # exactly -0.5 is not below it
        cell("A", "t3", "X", 0.2),
    ]
    r = TransferReport.from_cells(cells, encoders=["A"], tasks=["t1", "t2", "t3"], programs=["X"])
    x = r.line("X")
    assert (x.deep_losses, x.queries) == (1, 3)
    assert x.worst_query == pytest.approx(-0.6)
