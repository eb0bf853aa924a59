import pytest

from embedding_ttc.evaluation.comparison import WTL, Comparison
from embedding_ttc.evaluation.grid import Grid
from embedding_ttc.evaluation.records import SummaryRow
from embedding_ttc.evaluation.table import DiscoveryTable


def row(task, program, ndcg, delta, base, prog):
    return SummaryRow(
        encoder="enc",
        task=task,
        program=program,
        comparison=Comparison(
            ndcg_at_10=ndcg,
            baseline_ndcg_at_10=ndcg - delta,
            delta_ndcg_at_10=delta,
            wtl=WTL(wins=0, ties=1, losses=0),
        ),
        cost_ratio=(base + prog) / base,
        base_calls=base,
        program_calls=prog,
        index_calls=base,
        query_calls=prog,
        encode_seconds=1.0,
        forward_seconds=1.0,
        algebra_seconds=0.5,
        total_seconds=2.0,
    )


ROWS = [
    row("a", "P0", 0.5, 0.0, 100, 0),
    row("b", "P0", 0.2, 0.0, 300, 0),
    row("a", "X", 0.6, 0.1, 100, 100),
    row("b", "X", 0.1995, -0.0005, 300, 100),
]


def test_aggregates_over_tasks():
    table = DiscoveryTable.from_rows(ROWS)
    p0, x = table.lines
    assert (p0.program, p0.cost_ratio, p0.mean_delta) == ("P0", 1.0, 0.0)
    assert p0.wtl == WTL(wins=0, ties=2, losses=0)
    assert x.cost_ratio == pytest.approx(600 / 400)  # summed calls, not a mean of ratios
    assert x.mean_delta == pytest.approx((0.1 - 0.0005) / 2)
    assert x.wtl == WTL(wins=1, ties=1, losses=0)  # -0.0005 is a tie at ±0.001
    assert x.per_task_delta == {"a": 0.1, "b": -0.0005}


def test_renderings():
    table = DiscoveryTable.from_rows(ROWS)
    md = table.to_markdown().splitlines()
    assert md[0] == "| program | c | mean ΔnDCG@10 | W/T/L | mean nDCG@10 | a | b |"
    assert md[3].startswith("| X | 1.50 | +0.0498 | 1/1/0 |")
    csv_lines = table.to_csv().splitlines()
    assert csv_lines[0].startswith(
        "program,cost_ratio,mean_delta,wins,ties,losses,mean_ndcg,delta:a"
    )
    assert r"\textsc{X} & $1.5$ & $+0.0498$ & $1/1/0$ \\" in table.to_latex()


def test_missing_cell_is_an_error():
    with pytest.raises(ValueError, match="no result on"):
        DiscoveryTable.from_rows(ROWS[:3])


def test_extra_measures_are_columns_of_their_means_over_tasks():
    rows = [
        r.model_copy(update={"metrics": {"map": m, "recall_100": 2 * m}})
        for r, m in zip(ROWS, (0.2, 0.4, 0.3, 0.1), strict=True)
    ]
    table = DiscoveryTable.from_rows(rows)
    assert table.metrics == ["map", "recall_100"]
    p0, x = table.lines
    assert p0.metrics == pytest.approx({"map": 0.3, "recall_100": 0.6})
    assert x.metrics == pytest.approx({"map": 0.2, "recall_100": 0.4})
    md = table.to_markdown().splitlines()
    assert md[0] == (
        "| program | c | mean ΔnDCG@10 | W/T/L | mean nDCG@10 | mean map | mean recall_100 "
        "| a | b |"
    )
    assert md[2].startswith("| P0 | 1.00 | +0.0000 | 0/2/0 | 0.3500 | 0.3000 | 0.6000 |")
    header = table.to_csv().splitlines()[0]
    assert header.startswith("program,cost_ratio,mean_delta,wins,ties,losses,mean_ndcg,")
    assert ",mean_ndcg,mean:map,mean:recall_100,delta:a,delta:b," in header
    assert r"W/T/L (2 tasks) & mean map & mean recall\_100 \\" in table.to_latex()
    assert r"$1/1/0$ & $0.2000$ & $0.4000$ \\" in table.to_latex()
    # a program without the measure on one of its tasks shows a dash, not a partial mean
    partial = [*rows[:3], ROWS[3]]
    x = DiscoveryTable.from_rows(partial).lines[1]
    assert x.metrics == {"map": None, "recall_100": None}
    assert "| – | – |" in DiscoveryTable.from_rows(partial).to_markdown()


def test_a_grid_refuses_rows_formats_or_tex_header_of_another_width():
    with pytest.raises(ValueError, match="a row of 1 cells, 2 columns"):
        Grid("t", ("a", "b"), (("x",),), ("", ""))
    with pytest.raises(ValueError, match="1 formats, 2 columns"):
        Grid("t", ("a", "b"), (), ("",))
    with pytest.raises(ValueError, match="3 TeX header cells, 2 columns"):
        Grid("t", ("a", "b"), (), ("", ""), tex_header=("$a$", "b", "c"))


def test_a_tex_header_is_written_as_given_and_the_rest_as_every_grid():
    grid = Grid("t", ("name", "Δ"), (("a_b", -0.5), ("c", None)), ("", "{:+.2f}"))
    assert grid.to_latex().splitlines()[2] == r"\textbf{name} & \textbf{$\Delta$} \\"
    given = Grid("t", ("name", "Δ"), grid.rows, grid.formats, tex_header=("Name", r"$\Delta$"))
    lines = given.to_latex().splitlines()
    assert lines[2] == r"Name & $\Delta$ \\"
    assert lines[4:6] == [r"\textsc{a\_b} & $-0.50$ \\", r"\textsc{c} & -- \\"]
    assert given.to_latex().splitlines()[4:] == grid.to_latex().splitlines()[4:]
