import math
import subprocess
import sys

import pytest

from embedding_ttc.analysis.figure_data.base import Skipped
from embedding_ttc.analysis.figure_data.build import FIGURE_NAMES, FigureInputs, build_figures
from embedding_ttc.analysis.figure_data.layout import MIN_UMAP_POINTS, layout_2d, pca_2d
from embedding_ttc.analysis.figure_data.prf import prf_bars, prf_grid
from embedding_ttc.analysis.figure_data.search import pareto_data, trajectory_data
from embedding_ttc.analysis.figure_data.train_vs_test import train_vs_test_data
from embedding_ttc.analysis.figure_data.transfer import (
    choose_program,
    encoder_bars,
    encoder_bars_grid,
    heatmap_data,
    normalise_columns,
)
from embedding_ttc.analysis.figures.search import caption_pareto, draw_pareto
from embedding_ttc.analysis.heads import LEARNED_HEAD, HeadRecord
from embedding_ttc.analysis.transfer_report import TransferReport
from embedding_ttc.errors import UnknownNameError
from embedding_ttc.runs.records import LedgerRecord
from ledger_records import evaluated, split_evaluated

from .cell_factory import cell


def record(gen, pid, mean, cost, per_task=None, status="ok"):
    if status != "ok":
        return LedgerRecord(generation=gen, program_id=pid, status=status, proposer="test")
    deltas = per_task or {"t1": mean, "t2": mean}
    return evaluated(gen, pid, deltas, mean_delta=mean, cost_ratio=cost)


LEDGER = [
    record(0, "P0", 0.0, 1.0, {"t1": 0.0, "t2": 0.0}),
    record(1, "A", 0.1, 1.0, {"t1": 0.2, "t2": 0.0}),
    record(2, "B", 0.05, 2.0, {"t1": 0.0, "t2": 0.1}),  # dominated by A
    record(3, "C", 0.2, 3.0, {"t1": 0.1, "t2": 0.3}),
    record(4, "D", 0.0, 0.0, status="rejected"),
]


# --- (a) Pareto ---------------------------------------------------------------------------


def test_pareto_points_frontier_and_curve_from_p0():
    data = pareto_data(LEDGER, label="enc on suite")
    assert not isinstance(data, Skipped)
    assert [p.program_id for p in data.points] == ["P0", "A", "B", "C"]
    assert [p.program_id for p in data.frontier] == ["A", "C"]  # A (c=1, 0.1) dominates P0
    assert [p.program_id for p in data.points if p.admitted] == ["A", "C"]
    assert data.curve == ((1.0, 0.0), (1.0, 0.1), (3.0, 0.2))
    assert data.n_tasks == 2 and data.n_not_evaluated == 1 and data.label == "enc on suite"


def test_pareto_curve_does_not_repeat_p0_when_it_is_on_the_frontier():
    data = pareto_data([record(0, "P0", 0.0, 1.0), record(1, "X", 0.1, 2.0)])
    assert not isinstance(data, Skipped)
    assert [p.program_id for p in data.frontier] == ["P0", "X"]
    assert data.curve == ((1.0, 0.0), (2.0, 0.1))


def test_pareto_marks_the_transfer_rules_programs_when_the_ledger_has_a_split():
    assert not any(p.transfer_admitted for p in pareto_data(LEDGER).points)  # no split
    split = [
        split_evaluated(0, "P0", {"t": 0.0}, {"t": 0.0}),
        split_evaluated(1, "A", {"t": 0.3}, {"t": -0.01}),  # its validation part loses
        split_evaluated(2, "B", {"t": 0.1}, {"t": 0.05}),
    ]
    data = pareto_data(split)
    assert not isinstance(data, Skipped)
    assert [p.program_id for p in data.points if p.transfer_admitted] == ["B"]
    assert [p.program_id for p in data.points if p.admitted] == ["A"]
    assert "Stars mark the 1 program(s) the transfer rule admits" in caption_pareto(data)
    labels = draw_pareto(data).axes[0].get_legend_handles_labels()[1]
    assert "admitted by the transfer rule (1)" in labels
    # Against the run's reference (0.05 above P0 in these records) B no longer beats the bar.
    against = pareto_data(
        [*split, split_evaluated(3, "C", {"t": 0.1}, {"t": 0.09})], objective="reference"
    )
    assert not isinstance(against, Skipped)
    assert [p.program_id for p in against.points if p.transfer_admitted] == ["C"]


def test_pareto_without_an_evaluated_program_is_skipped():
    data = pareto_data([record(0, "D", 0.0, 0.0, status="crashed")])
    assert isinstance(data, Skipped) and "no evaluated program" in data.reason


# --- (c) trajectory -----------------------------------------------------------------------


def test_pca_scores_on_a_line_with_a_fixed_sign():
    coords = pca_2d([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])
    r2 = math.sqrt(2.0)
    assert [c[0] for c in coords] == pytest.approx([-r2, 0.0, r2])
    assert [c[1] for c in coords] == pytest.approx([0.0, 0.0, 0.0])
    # The same points in another order: each point keeps its score (sign fixed by loadings).
    again = pca_2d([[2.0, 2.0], [0.0, 0.0], [1.0, 1.0]])
    assert [c[0] for c in again] == pytest.approx([r2, -r2, 0.0])


def test_pca_of_degenerate_inputs():
    assert pca_2d([]) == ()
    assert pca_2d([[0.3, 0.1]]) == ((0.0, 0.0),)
    assert pca_2d([[1.0, 2.0], [1.0, 2.0]]) == ((0.0, 0.0), (0.0, 0.0))


def test_layout_falls_back_to_pca_below_the_umap_minimum_and_says_why():
    vectors = [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [1.0, 1.0, 1.0]]
    assert len(vectors) < MIN_UMAP_POINTS
    first = layout_2d(vectors, seed=3)
    assert first.method == "pca"
    assert "4 programs" in first.note and f"at least {MIN_UMAP_POINTS}" in first.note
    assert first.coords == pca_2d(vectors)
    assert layout_2d(vectors, seed=3) == first  # deterministic


@pytest.mark.slow  # numba compiles UMAP's kernels on first use: ~20 s on two cores
def test_umap_layout_is_seeded_and_deterministic():
    vectors = [[math.sin(i * k) for k in range(1, 6)] for i in range(8)]
    first = layout_2d(vectors, seed=7)
    assert first.method == "umap" and first.note == "UMAP, seed 7"
    assert len(first.coords) == 8
    assert layout_2d(vectors, seed=7) == first


def test_trajectory_places_programs_by_their_per_task_deltas():
    data = trajectory_data(LEDGER, seed=0)
    assert not isinstance(data, Skipped)
    assert data.tasks == ("t1", "t2") and data.method == "pca"
    assert [p.program_id for p in data.points] == ["P0", "A", "B", "C"]
    vectors = [[0.0, 0.0], [0.2, 0.0], [0.0, 0.1], [0.1, 0.3]]
    assert [(p.x, p.y) for p in data.points] == list(pca_2d(vectors))
    # Two tasks, two components: PCA is a rotation, so distances are those of the Δ vectors.
    for i, j in ((0, 3), (1, 2)):
        pi, pj = data.points[i], data.points[j]
        assert math.dist((pi.x, pi.y), (pj.x, pj.y)) == pytest.approx(
            math.dist(vectors[i], vectors[j])
        )
    assert data.path == ("A", "C")  # the Pareto programs, ascending cost
    assert [p.generation for p in data.points] == [0, 1, 2, 3]
    assert [p.cost_ratio for p in data.points] == [1.0, 1.0, 2.0, 3.0]


def test_trajectory_uses_the_tasks_every_program_has():
    ledger = [
        record(0, "P0", 0.0, 1.0, {"t1": 0.0, "t2": 0.0, "t3": 0.0}),
        record(1, "A", 0.1, 1.0, {"t2": 0.1, "t1": 0.1}),
    ]
    data = trajectory_data(ledger)
    assert not isinstance(data, Skipped) and data.tasks == ("t1", "t2")


# --- (b) heat-map -----------------------------------------------------------------------------

HELD = [
    cell("A", "t1", "X", 0.02, sig=+1),
    cell("A", "t2", "X", -0.1, sig=-1),
    cell("A", "t1", "Y", -0.01),
    cell("A", "t2", "Y", 0.05),
    cell("B", "t1", "X", 0.001),  # a tie: no lift
    cell("B", "t1", "Y", -0.004),
    cell("B", "t2", "Y", 0.0),
    # B · t2 · X missing
]


def held_report(cells=HELD, programs=("P0", "X", "Y"), **kwargs):
    return TransferReport.from_cells(
        cells, encoders=["A", "B"], tasks=["t1", "t2"], programs=list(programs), **kwargs
    )


def test_normalise_columns_scales_each_column_by_its_largest_magnitude():
    shade = normalise_columns([[0.02, -0.1, 0.0], [-0.01, None, 0.0], [0.0, 0.05, 0.0]])
    assert shade == (
        pytest.approx((1.0, -1.0, 0.0)),
        (pytest.approx(-0.5), None, 0.0),
        pytest.approx((0.0, 0.5, 0.0)),
    )


def test_heatmap_per_encoder_panels_with_per_column_colour_and_significance():
    data = heatmap_data(held_report())
    assert not isinstance(data, Skipped)
    assert data.programs == ("X", "Y") and data.tasks == ("t1", "t2")
    a, b = data.panels
    assert a.encoder == "A" and b.encoder == "B"
    assert a.deltas == ((0.02, -0.1), (-0.01, 0.05))
    assert a.shade == (pytest.approx((1.0, -1.0)), pytest.approx((-0.5, 0.5)))
    assert a.significant == ((True, True), (False, False))
    assert a.lifted_tasks == 2 and a.tasks_present == 2
    # Each panel is normalised on its own: B's t1 column is scaled by 0.004, not A's 0.02.
    assert b.deltas == ((0.001, None), (-0.004, 0.0))
    assert b.shade == (pytest.approx((0.25, None)), pytest.approx((-1.0, 0.0)))
    assert b.lifted_tasks == 0 and b.tasks_present == 2


def test_heatmap_rows_leave_out_variants_and_the_learned_head():
    cells = [
        *HELD,
        cell("A", "t1", "Rocchio:K=2,beta=0.1", 0.0),
        cell("A", "t1", LEARNED_HEAD, 0.0),
    ]
    report = held_report(cells, programs=("P0", "X", "Y", "Rocchio:K=2,beta=0.1", LEARNED_HEAD))
    data = heatmap_data(report)
    assert not isinstance(data, Skipped) and data.programs == ("X", "Y")


# --- (d) per-encoder bars ----------------------------------------------------------------------


def test_encoder_bars_median_and_win_rate_per_encoder():
    bars = encoder_bars(held_report(), "Y", "asked for")
    a, b = bars.bars
    assert (a.encoder, a.cells, a.wins) == ("A", 2, 1)
    assert a.median_delta == pytest.approx(0.02) and a.win_rate == pytest.approx(0.5)
    assert (b.encoder, b.cells, b.wins) == ("B", 2, 0)
    assert b.median_delta == pytest.approx(-0.002) and b.win_rate == 0.0
    grid = encoder_bars_grid(held_report())
    assert not isinstance(grid, Skipped)
    assert [p.program for p in grid.panels] == ["X", "Y"]
    x_b = grid.panels[0].bars[1]
    assert x_b.cells == 1 and x_b.median_delta == pytest.approx(0.001)


def test_choose_program_defaults_to_lexical_hybrid_rrf_then_the_best_median():
    with_lex = held_report(
        [*HELD, cell("A", "t1", "LexicalHybridRRF", -0.5)],
        programs=("X", "Y", "LexicalHybridRRF"),
    )
    assert choose_program(with_lex)[0] == "LexicalHybridRRF"
    program, why = choose_program(held_report())
    assert program == "X" and "highest pooled median" in why  # X 0.001 against Y -0.002
    with pytest.raises(UnknownNameError, match="Did you mean: X"):
        choose_program(held_report(), "x")


# --- (e) training-time against test-time ----------------------------------------------------


def head_record(encoder, discovery=0.7, chosen="linear"):
    return HeadRecord(
        schema_version=1,
        kind="head_training",
        encoder=encoder,
        chosen=chosen,
        seed=0,
        n_train_pairs=100,
        n_validation_queries=10,
        families=[
            {
                "family": "linear",
                "parameters": 147456,
                "train_seconds": 3.0,
                "validation_ndcg_at_10": 0.6,
                "discovery_ndcg_at_10": discovery,
            },
            {
                "family": "whitening",
                "parameters": 0,
                "train_seconds": 0.1,
                "validation_ndcg_at_10": 0.5,
                "discovery_ndcg_at_10": None,
            },
        ],
    )


def test_head_record_rejects_unknown_fields():
    good = head_record("A").model_dump()
    with pytest.raises(ValueError):
        HeadRecord.model_validate({**good, "surprise": 1})


def test_train_vs_test_programs_head_at_c1_and_heads_per_encoder():
    head_cells = [
        cell("A", "t1", LEARNED_HEAD, -0.02),
        cell("A", "t2", LEARNED_HEAD, -0.04),
        cell("B", "t1", LEARNED_HEAD, 0.01),
        # A's in-domain Δ from its discovery cells (mean): 0.2 and 0.3
        cell("A", "d1", LEARNED_HEAD, 0.2),
        cell("A", "d2", LEARNED_HEAD, 0.3),
        # B has no discovery cells: its record's nDCG@10 minus P0's mean over d1, d2 (0.5)
        cell("B", "d1", "P0", 0.0, baseline=0.4),
        cell("B", "d2", "P0", 0.0, baseline=0.6),
    ]
    report = held_report(discovery_encoder="A", discovery_tasks=["d1", "d2"])
    data = train_vs_test_data(report, [*HELD, *head_cells], [head_record("B", discovery=0.75)])
    assert not isinstance(data, Skipped)
    assert [p.program for p in data.programs] == ["X", "Y"]
    assert data.head is not None
    assert data.head.cost_ratio == 1.0 and data.head.cells == 3
    assert data.head.median_delta == pytest.approx(-0.02)
    assert data.best is not None and data.best.program == "X"  # median 0.001, Y's -0.002
    a, b = data.heads
    assert a.encoder == "A" and a.family == LEARNED_HEAD
    assert a.in_domain_delta == pytest.approx(0.25)
    assert a.heldout_median == pytest.approx(-0.03) and a.heldout_cells == 2
    assert a.heldout_win_rate == 0.0
    assert b.encoder == "B" and b.family == "linear"
    assert b.in_domain_delta == pytest.approx(0.25)  # 0.75 - mean(0.4, 0.6)
    assert "head record" in b.in_domain_source
    assert b.heldout_median == pytest.approx(0.01) and b.heldout_win_rate == 1.0


def test_train_vs_test_without_heads_omits_the_right_panel_and_says_why():
    data = train_vs_test_data(held_report(), HELD, [])
    assert not isinstance(data, Skipped)
    assert data.heads == () and data.head is None
    assert data.note.startswith("right panel omitted: no learned heads")
    noted = train_vs_test_data(held_report(), HELD, [], heads_note="A.json is not a record")
    assert not isinstance(noted, Skipped)
    assert noted.note == "right panel omitted: A.json is not a record"


# --- (f) Rocchio against SoftCentroid -------------------------------------------------------

PRF = [
    cell("A", "birco_arguana", "SoftCentroid", 0.05, sig=+1),
    cell("A", "birco_arguana", "Rocchio:K=2,beta=0.1", 0.01),
    cell("A", "birco_arguana", "Rocchio:K=3,beta=0.5", 0.02, sig=+1),
    cell("B", "birco_arguana", "SoftCentroid", -0.01),
    cell("B", "birco_arguana", "Rocchio:K=2,beta=0.1", 0.03),
    cell("A", "t2", "SoftCentroid", 0.0),
    cell("A", "t2", "Rocchio:K=2,beta=0.1", 0.01, sig=+1),
]
PRF_PROGRAMS = ["SoftCentroid", "Rocchio:K=2,beta=0.1", "Rocchio:K=3,beta=0.5"]


def prf_report(cells=PRF, programs=PRF_PROGRAMS):
    return TransferReport.from_cells(
        cells, encoders=["A", "B"], tasks=["birco_arguana", "t2"], programs=programs
    )


def test_prf_bars_best_rocchio_against_soft_centroid_per_encoder():
    data = prf_bars(prf_report())
    assert not isinstance(data, Skipped)
    assert data.task == "birco_arguana" and data.n_rocchio == 2
    a, b = data.bars
    assert (a.encoder, a.rocchio_program, a.rocchio_delta) == ("A", "Rocchio:K=3,beta=0.5", 0.02)
    assert a.rocchio_significant and a.soft_centroid_significant
    assert a.soft_centroid_delta == 0.05
    assert (b.encoder, b.rocchio_program, b.rocchio_delta) == ("B", "Rocchio:K=2,beta=0.1", 0.03)
    assert not b.rocchio_significant and b.soft_centroid_delta == -0.01
    grid = prf_grid(prf_report())
    assert not isinstance(grid, Skipped)
    assert [p.task for p in grid.panels] == ["birco_arguana", "t2"]
    assert [b.encoder for b in grid.panels[1].bars] == ["A"]


def test_prf_is_skipped_without_rocchio_or_on_a_task_without_cells():
    no_rocchio = prf_report([c for c in PRF if c.program == "SoftCentroid"], ["SoftCentroid"])
    skipped = prf_bars(no_rocchio)
    assert isinstance(skipped, Skipped) and "has no Rocchio variant" in skipped.reason
    assert isinstance(prf_grid(no_rocchio), Skipped)
    elsewhere = prf_bars(prf_report(), "scifact")
    assert isinstance(elsewhere, Skipped) and "scifact" in elsewhere.reason


# --- every figure -------------------------------------------------------------------------------


def test_build_figures_names_every_figure_and_skips_the_search_ones_without_a_ledger():
    figures = build_figures(FigureInputs(report=prf_report([*PRF, *HELD], ["X", *PRF_PROGRAMS])))
    assert tuple(figures) == FIGURE_NAMES
    for name in ("pareto", "trajectory"):
        skipped = figures[name]
        assert isinstance(skipped, Skipped) and "--search-run" in skipped.reason
    assert not isinstance(figures["heatmap"], Skipped)
    assert not isinstance(figures["prf"], Skipped)
    with_ledger = build_figures(FigureInputs(report=held_report(), ledger=tuple(LEDGER)))
    assert not isinstance(with_ledger["pareto"], Skipped)
    assert not isinstance(with_ledger["trajectory"], Skipped)
    assert isinstance(with_ledger["prf"], Skipped)


def test_figure_data_imports_no_plotting_library():
    # Computation apart from rendering: the report's numbers need neither matplotlib nor UMAP.
    code = (
        "import sys, embedding_ttc.analysis.figure_data.build; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('matplotlib', 'umap')))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"
