"""The transfer study's figures: matplotlib rendering of :mod:`.figure_data` records, nothing else.

Every figure is a :class:`FigureSpec` in :data:`FIGURES`, a registry keyed by the names of
:data:`~embedding_ttc.analysis.figure_data.build.FIGURE_NAMES`: it draws one data record on a fresh
:class:`matplotlib.figure.Figure` (the Agg canvas, no pyplot state) and writes its caption.
:func:`save` writes ``<name>.png`` and ``<name>.svg``. matplotlib is the ``report`` extra and is
imported only when a figure is drawn.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from embedding_ttc.analysis.figure_data.build import FigureData
from embedding_ttc.analysis.figure_data.prf import PRFBars, PRFGrid
from embedding_ttc.analysis.figure_data.search import ParetoData, TrajectoryData
from embedding_ttc.analysis.figure_data.train_vs_test import TrainVsTestData
from embedding_ttc.analysis.figure_data.transfer import EncoderBars, EncoderBarsGrid, HeatmapData
from embedding_ttc.analysis.heads import LEARNED_HEAD
from embedding_ttc.errors import MissingExtraError
from embedding_ttc.registry import Registry

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

FRONTIER = "#1f5fa8"
DOMINATED = "#9a9a9a"
GAIN = "#2e8b57"
LOSS = "#c0392b"
ROCCHIO_COLOUR = "#8c8c8c"
HEAD_COLOUR = "#d35400"
DPI = 150


def _new_figure(width: float, height: float) -> Figure:
    """A blank figure on its own Agg canvas (raises the install hint without matplotlib).

    No pyplot: nothing global changes, so a caller's interactive backend is left alone.
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingExtraError("matplotlib", "report", "the report's figures") from None
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _zero_line(ax: Axes) -> None:
    ax.axhline(0.0, color="#444444", linewidth=0.8, linestyle=":", zorder=0)


# Label positions tried around a point, in points from it: (dx, dy, ha, va).
_SLOTS: tuple[tuple[float, float, str, str], ...] = (
    (6, 0, "left", "center"),
    (-6, 0, "right", "center"),
    (0, 7, "center", "bottom"),
    (0, -7, "center", "top"),
    (6, 8, "left", "bottom"),
    (6, -8, "left", "top"),
    (-6, 8, "right", "bottom"),
    (-6, -8, "right", "top"),
    (10, 16, "left", "bottom"),
    (10, -16, "left", "top"),
    (-10, 16, "right", "bottom"),
    (-10, -16, "right", "top"),
)


def _labels(
    ax: Axes,
    xs: Sequence[float],
    ys: Sequence[float],
    texts: Sequence[str],
    size: float = 7,
    clear: float = 6,
) -> None:
    """Name points, each label in the first slot around its point that overlaps nothing.

    ``clear`` is the markers' radius in points: labels start that far from the point.

    The figure is laid out first, so that the overlap test sees the final positions; labels are
    then kept out of the layout, which would otherwise move the axes under them.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = ax.figure
    if not xs or not isinstance(fig.canvas, FigureCanvasAgg):
        return
    fig.canvas.draw()  # type: ignore[no-untyped-call]
    renderer = fig.canvas.get_renderer()  # type: ignore[no-untyped-call]
    frame = ax.get_window_extent(renderer)
    taken = []
    for x, y in zip(xs, ys, strict=True):
        px, py = ax.transData.transform((x, y))
        r = clear * fig.dpi / 72 * 0.8
        taken.append((px - r, py - r, px + r, py + r))
    for x, y, text in zip(xs, ys, texts, strict=True):
        chosen = None
        for dx, dy, ha, va in _SLOTS:
            label = ax.annotate(
                text,
                (x, y),
                xytext=(dx * clear / 6, dy * clear / 6),
                textcoords="offset points",
                ha=ha,
                va=va,
                fontsize=size,
                arrowprops=(
                    {"arrowstyle": "-", "color": "#999999", "linewidth": 0.5}
                    if abs(dy) > 10
                    else None
                ),
            )
            label.set_in_layout(False)
            box = label.get_window_extent(renderer)
            rect = (box.x0, box.y0, box.x1, box.y1)
            inside = frame.x0 <= rect[0] and rect[2] <= frame.x1 and frame.y0 <= rect[1]
            if inside and rect[3] <= frame.y1 and not any(_overlap(rect, t) for t in taken):
                chosen = rect
                break
            label.remove()
        if chosen is None:  # crowded everywhere: the first slot, overlapping
            dx, dy, ha, va = _SLOTS[0]
            label = ax.annotate(
                text,
                (x, y),
                xytext=(dx * clear / 6, dy * clear / 6),
                textcoords="offset points",
                ha=ha,
                va=va,
                fontsize=size,
            )
            label.set_in_layout(False)
            box = label.get_window_extent(renderer)
            chosen = (box.x0, box.y0, box.x1, box.y1)
        taken.append(chosen)


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _pad_ylim(ax: Axes, values: Sequence[float], pad: float = 0.18) -> None:
    """Y limits around ``values`` and 0 with room for the labels at the bars' ends."""
    finite = [v for v in values if math.isfinite(v)]
    lo, hi = min(0.0, *finite), max(0.0, *finite)
    span = (hi - lo) or 0.01
    ax.set_ylim(lo - pad * span, hi + pad * span)


def _pad_xlim(ax: Axes, n: int) -> None:
    """X limits that keep a few bars narrow (one bar does not fill the axes)."""
    half = max(0.7, (3 - n) / 2 + 0.6)
    ax.set_xlim(-half, n - 1 + half)


# --- (a) Pareto ---------------------------------------------------------------------------------


def draw_pareto(data: ParetoData) -> Figure:
    """Mean Δ against cost for every evaluated program; the Pareto set and its curve."""
    fig = _new_figure(7.0, 4.6)
    ax = fig.add_subplot()
    dominated = [p for p in data.points if not p.on_frontier]
    ax.scatter(
        [p.cost_ratio for p in dominated],
        [p.mean_delta for p in dominated],
        s=22,
        color=DOMINATED,
        alpha=0.7,
        label=f"dominated ({len(dominated)})",
        zorder=2,
    )
    ax.plot(
        [c for c, _ in data.curve],
        [d for _, d in data.curve],
        color=FRONTIER,
        linewidth=1.4,
        label="frontier from P0 (c = 1, Δ = 0)",
        zorder=3,
    )
    ax.scatter(
        [p.cost_ratio for p in data.frontier],
        [p.mean_delta for p in data.frontier],
        s=60,
        color=FRONTIER,
        edgecolor="white",
        linewidth=0.8,
        label=f"Pareto-optimal ({len(data.frontier)})",
        zorder=4,
    )
    ax.scatter([1.0], [0.0], marker="D", s=30, color="black", label="P0", zorder=5)
    _zero_line(ax)
    ax.set_xlabel("cost ratio c (encoder calls relative to P0)")
    ax.set_ylabel(f"mean ΔnDCG@10 over {data.n_tasks} discovery tasks")
    title = f"Search frontier: {len(data.points)} evaluated programs"
    ax.set_title(f"{title}\n{data.label}" if data.label else title, fontsize=10)
    ax.margins(x=0.12, y=0.1)
    ax.grid(alpha=0.25)
    ax.legend(fontsize=8, loc="best")
    _labels(
        ax,
        [p.cost_ratio for p in data.frontier],
        [p.mean_delta for p in data.frontier],
        [p.program_id for p in data.frontier],
    )
    return fig


def caption_pareto(data: ParetoData) -> str:
    """What the Pareto figure shows."""
    skipped = (
        f" {data.n_not_evaluated} further candidate(s) were not evaluated (rejected, timed out "
        "or crashed) and are not drawn."
        if data.n_not_evaluated
        else ""
    )
    return (
        f"Mean ΔnDCG@10 on the {data.n_tasks} discovery tasks against cost ratio c for the "
        f"{len(data.points)} evaluated programs of the search. Blue points are the "
        f"{len(data.frontier)} Pareto-optimal programs, grey points are dominated; the curve "
        f"joins the frontier from P0. In-search measurements.{skipped}"
    )


# --- (c) trajectory ------------------------------------------------------------------------------


def draw_trajectory(data: TrajectoryData) -> Figure:
    """The 2-D layout of per-task Δ vectors, by generation and by cost; the frontier path."""
    fig = _new_figure(11.0, 4.6)
    axes = fig.subplots(1, 2, sharex=True, sharey=True)
    xs = [p.x for p in data.points]
    ys = [p.y for p in data.points]
    where = {p.program_id: p for p in data.points}
    path = [where[i] for i in data.path]
    axis = "UMAP" if data.method == "umap" else "PC"
    for ax, values, cmap, label in (
        (axes[0], [p.generation for p in data.points], "viridis", "generation"),
        (axes[1], [p.cost_ratio for p in data.points], "plasma", "cost ratio c"),
    ):
        dots = ax.scatter(xs, ys, c=values, cmap=cmap, s=34, edgecolor="black", linewidth=0.3)
        fig.colorbar(dots, ax=ax, label=label, shrink=0.85)
        ax.plot(
            [p.x for p in path],
            [p.y for p in path],
            color="black",
            linewidth=1.0,
            linestyle="--",
            zorder=1,
            label="frontier, ascending cost",
        )
        ax.scatter(
            [p.x for p in path],
            [p.y for p in path],
            s=150,
            facecolor="none",
            edgecolor="black",
            linewidth=1.2,
            label="Pareto-optimal",
        )
        ax.set_xlabel(f"{axis} 1")
        ax.set_ylabel(f"{axis} 2")
        ax.set_title(f"coloured by {label}", fontsize=10)
        ax.margins(0.15)
    axes[0].legend(fontsize=8, loc="best")
    fig.suptitle(
        f"Search trajectory: {len(data.points)} programs placed by their Δ on "
        f"{len(data.tasks)} tasks ({data.note})",
        fontsize=10,
    )
    for ax in axes:
        _labels(ax, [p.x for p in path], [p.y for p in path], [p.program_id for p in path], clear=9)
    return fig


def caption_trajectory(data: TrajectoryData) -> str:
    """What the trajectory figure shows."""
    return (
        f"Two-dimensional layout ({data.note}) of the {len(data.points)} evaluated programs, "
        f"positioned by their vectors of per-task ΔnDCG@10 on {len(data.tasks)} discovery "
        "tasks, so that programs which help the same tasks lie close together. Left: colour by "
        "generation; right: by cost ratio c. Circled points are the Pareto-optimal programs, "
        "joined in ascending cost."
    )


# --- (b) heat-map --------------------------------------------------------------------------------


def draw_heatmap(data: HeatmapData) -> Figure:
    """One programs × tasks panel per encoder, colour scaled per task column."""
    import numpy as np
    from matplotlib import colormaps

    n_panels, n_rows, n_cols = len(data.panels), len(data.programs), len(data.tasks)
    width = 2.0 + n_panels * (0.62 * n_cols + 0.5)
    fig = _new_figure(max(width, 6.0), 1.9 + 0.34 * n_rows)
    axes = fig.subplots(1, n_panels, sharey=True, squeeze=False)[0]
    cmap = colormaps["RdYlGn"].with_extremes(bad="#e6e6e6")
    image = None
    for ax, panel in zip(axes, data.panels, strict=True):
        shade = np.ma.masked_invalid(
            np.array([[np.nan if v is None else v for v in row] for row in panel.shade])
        )
        image = ax.imshow(shade, cmap=cmap, vmin=-1.0, vmax=1.0, aspect="auto")
        for i, row in enumerate(panel.deltas):
            for j, d in enumerate(row):
                if d is None:
                    ax.text(j, i, "–", ha="center", va="center", fontsize=7, color="#777777")
                    continue
                star = "*" if panel.significant[i][j] else ""
                dark = abs(panel.shade[i][j] or 0.0) > 0.75
                ax.text(
                    j,
                    i,
                    f"{100 * d:+.1f}{star}",
                    ha="center",
                    va="center",
                    fontsize=6.5,
                    color="white" if dark else "black",
                )
        ax.set_xticks(range(n_cols), data.tasks, rotation=45, ha="right", fontsize=7.5)
        ax.set_yticks(range(n_rows), data.programs, fontsize=8)
        ax.set_title(
            f"{panel.encoder}\n{panel.lifted_tasks} of {panel.tasks_present} tasks lifted",
            fontsize=8.5,
        )
    if image is not None:
        fig.colorbar(image, ax=list(axes), label="Δ / max |Δ| of the task column", shrink=0.8)
    fig.suptitle("Held-out ΔnDCG@10 (×100) per encoder; * bootstrap 95% CI excludes 0", fontsize=10)
    return fig


def caption_heatmap(data: HeatmapData) -> str:
    """What the heat-map shows."""
    pairs = sum(p.tasks_present for p in data.panels)
    lifted = sum(p.lifted_tasks for p in data.panels)
    return (
        f"Held-out transfer of {len(data.programs)} programs: one panel per encoder, one column "
        "per held-out task. Cell colour encodes ΔnDCG@10 against that encoder's P0 (green "
        "improvement, red regression), normalised per task column; numbers are Δ×100, * marks "
        "a cell whose paired-bootstrap 95% CI excludes 0, grey cells are missing. Of "
        f"{pairs} encoder–task pairs with cells, {lifted} admit at least one program with Δ > "
        f"{data.threshold:g}."
    )


# --- (d) per-encoder bars ----------------------------------------------------------------------


def _bars(ax: Axes, data: EncoderBars, fontsize: float, *, ticks: bool = True) -> None:
    """One bar per encoder (none where the program has no cell), win-rate at its end."""
    heights = [b.median_delta if b.cells else 0.0 for b in data.bars]
    ax.bar(
        range(len(data.bars)),
        heights,
        color=[GAIN if h > 0 else LOSS for h in heights],
        width=0.6,
    )
    _zero_line(ax)
    for i, b in enumerate(data.bars):
        if not b.cells:
            ax.text(i, 0.0, "no cells", ha="center", va="bottom", fontsize=fontsize, color="#777")
            continue
        up = b.median_delta >= 0
        ax.annotate(
            f"{b.win_rate:.0%} ({b.wins}/{b.cells})",
            (i, b.median_delta),
            xytext=(0, 2 if up else -2),
            textcoords="offset points",
            ha="center",
            va="bottom" if up else "top",
            fontsize=fontsize,
        )
    names = [b.encoder for b in data.bars] if ticks else []
    ax.set_xticks(
        range(len(data.bars)), names or None, rotation=20, ha="right", fontsize=fontsize + 0.5
    )
    _pad_xlim(ax, len(data.bars))
    ax.grid(axis="y", alpha=0.25)


def draw_encoder_bars(data: EncoderBars) -> Figure:
    """Median held-out Δ of one program per encoder, win-rate on each bar."""
    fig = _new_figure(max(5.5, 1.3 * len(data.bars) + 2.5), 4.2)
    ax = fig.add_subplot()
    _bars(ax, data, 8)
    _pad_ylim(ax, [b.median_delta for b in data.bars if b.cells])
    ax.set_ylabel("median ΔnDCG@10 over the held-out tasks")
    ax.set_title(
        f"{data.program}: held-out transfer per encoder\n(win-rate and wins / cells on each bar)",
        fontsize=10,
    )
    return fig


def caption_encoder_bars(data: EncoderBars) -> str:
    """What the per-encoder bars show."""
    why = f" ({data.chosen_because})" if data.chosen_because else ""
    return (
        f"Held-out transfer of {data.program}{why} per encoder, as the median ΔnDCG@10 over "
        f"the held-out tasks, with the win-rate (Δ > {data.threshold:g}) and the wins out of "
        "the cells present annotated on each bar. The program runs unmodified on every encoder."
    )


def draw_encoder_bars_grid(data: EncoderBarsGrid) -> Figure:
    """Small multiples of :func:`draw_encoder_bars`, one panel per program, one y scale."""
    n = len(data.panels)
    cols = min(4, n)
    rows = math.ceil(n / cols)
    fig = _new_figure(3.2 * cols, 2.4 * rows + 1.2)
    axes = fig.subplots(rows, cols, sharex=True, sharey=True, squeeze=False)
    for k, ax in enumerate(axes.flat):
        if k >= n:
            ax.set_visible(False)
            continue
        lowest = k + cols >= n  # the lowest panel of its column carries the encoder names
        _bars(ax, data.panels[k], 6.5)
        ax.tick_params(axis="x", labelbottom=lowest)
        ax.set_title(data.panels[k].program, fontsize=9)
    _pad_ylim(axes.flat[0], [b.median_delta for p in data.panels for b in p.bars if b.cells], 0.25)
    for row in axes:
        row[0].set_ylabel("median Δ", fontsize=8)
    fig.suptitle("Median held-out ΔnDCG@10 per encoder, every program (win-rate on bars)")
    return fig


def caption_encoder_bars_grid(data: EncoderBarsGrid) -> str:
    """What the small multiples show."""
    return (
        f"The per-encoder bars of {len(data.panels)} programs on a shared y axis: median "
        "held-out ΔnDCG@10 per encoder, win-rate and wins out of the cells present on each bar."
    )


# --- (e) training-time against test-time ----------------------------------------------------------


def _cost_panel(ax: Axes, data: TrainVsTestData) -> None:
    xs = [p.cost_ratio for p in data.programs]
    ys = [p.median_delta for p in data.programs]
    ax.scatter(xs, ys, s=40, color=FRONTIER, label="programs", zorder=3)
    if data.head is not None:
        ax.scatter(
            [1.0],
            [data.head.median_delta],
            marker="s",
            s=60,
            color=HEAD_COLOUR,
            label="learned head (c = 1)",
            zorder=4,
        )
    _zero_line(ax)
    ax.set_xlabel("held-out cost ratio c")
    ax.set_ylabel("median held-out ΔnDCG@10 (pooled)")
    ax.set_title("(a) inference-time compute", fontsize=10)
    ax.margins(x=0.25, y=0.15)
    ax.grid(alpha=0.25)
    ax.legend(fontsize=8, loc="lower right")


def _heads_panel(ax: Axes, data: TrainVsTestData) -> None:
    encoders = [h.encoder for h in data.heads]
    pos = range(len(encoders))
    inside = [
        (i, h.in_domain_delta) for i, h in enumerate(data.heads) if h.in_domain_delta is not None
    ]
    held = [(i, h.heldout_median) for i, h in enumerate(data.heads) if h.heldout_median is not None]
    ax.scatter(
        [i for i, _ in inside],
        [v for _, v in inside],
        marker="^",
        s=70,
        color=GAIN,
        label="in-domain (mean over discovery tasks)",
        zorder=3,
    )
    ax.scatter(
        [i for i, _ in held],
        [v for _, v in held],
        marker="s",
        s=60,
        color=HEAD_COLOUR,
        label="held-out (median over tasks)",
        zorder=3,
    )
    for i, h in enumerate(data.heads):
        if h.in_domain_delta is not None and h.heldout_median is not None:
            ax.plot([i, i], [h.in_domain_delta, h.heldout_median], color="#bbbbbb", zorder=1)
    if data.best is not None:
        ax.axhline(
            data.best.median_delta,
            color=FRONTIER,
            linestyle="--",
            linewidth=1.2,
            label=f"best program held-out median ({data.best.program})",
        )
    _zero_line(ax)
    ticks = [f"{h.encoder}\n{h.family}" for h in data.heads]
    ax.set_xticks(list(pos), ticks, rotation=20, ha="right", fontsize=7.5)
    ax.set_xlim(-0.6, len(encoders) - 0.4)
    ax.set_ylabel("ΔnDCG@10")
    ax.set_title("(b) training-time compute: learned heads", fontsize=10)
    ax.margins(y=0.2)
    ax.grid(axis="y", alpha=0.25)
    ax.legend(fontsize=7.5, loc="best")


def draw_train_vs_test(data: TrainVsTestData) -> Figure:
    """Programs against cost with the head at c = 1; heads' in-domain against held-out Δ."""
    two = bool(data.heads)
    fig = _new_figure(12.0 if two else 6.5, 4.8)
    axes = fig.subplots(1, 2 if two else 1, squeeze=False)[0]
    _cost_panel(axes[0], data)
    if two:
        _heads_panel(axes[1], data)
    fig.suptitle("Test-time against training-time compute on the held-out tasks", fontsize=10)
    _labels(
        axes[0],
        [p.cost_ratio for p in data.programs],
        [p.median_delta for p in data.programs],
        [p.program for p in data.programs],
    )
    return fig


def caption_train_vs_test(data: TrainVsTestData) -> str:
    """What the training-time against test-time figure shows."""
    head = (
        f" The learned head ({data.head.cells} held-out cells) sits at c = 1, its inference "
        "being one matrix product."
        if data.head is not None
        else f" No {LEARNED_HEAD} cells: the head is not placed on the left."
    )
    right = (
        " (b) The chosen learned head per encoder: ▲ in-domain Δ, ■ held-out median Δ; the "
        f"dashed line is the best program's held-out median ({data.note})."
        if data.heads
        else f" (b) {data.note[0].upper()}{data.note[1:]}."
    )
    return (
        f"(a) {len(data.programs)} programs at their held-out cost ratio c and median "
        "ΔnDCG@10 pooled over every held-out (encoder, task) cell." + head + right
    )


# --- (f) Rocchio against SoftCentroid ------------------------------------------------------------


def _prf_panel(ax: Axes, data: PRFBars, fontsize: float) -> None:
    pos = list(range(len(data.bars)))
    width = 0.38
    for offset, values, sig, colour, label in (
        (
            -width / 2,
            [b.rocchio_delta for b in data.bars],
            [b.rocchio_significant for b in data.bars],
            ROCCHIO_COLOUR,
            "best Rocchio",
        ),
        (
            width / 2,
            [b.soft_centroid_delta for b in data.bars],
            [b.soft_centroid_significant for b in data.bars],
            FRONTIER,
            "SoftCentroid",
        ),
    ):
        bars = ax.bar([p + offset for p in pos], values, width, color=colour, label=label)
        texts = [f"{v:+.3f}{'*' if s else ''}" for v, s in zip(values, sig, strict=True)]
        ax.bar_label(bars, texts, fontsize=fontsize - 0.5, padding=1)
    _zero_line(ax)
    ticks = [f"{b.encoder}\nRocchio {_grid_point(b.rocchio_program)}" for b in data.bars]
    ax.set_xticks(pos, ticks, rotation=20, ha="right", fontsize=fontsize)
    _pad_xlim(ax, len(data.bars))
    _pad_ylim(ax, [v for b in data.bars for v in (b.rocchio_delta, b.soft_centroid_delta)], 0.25)
    ax.grid(axis="y", alpha=0.25)


def _grid_point(program: str) -> str:
    """``Rocchio:K=3,beta=0.5`` as ``K=3, β=0.5``; the plain program as ``default``."""
    params = program.partition(":")[2]
    return params.replace(",", ", ").replace("beta", "β") if params else "default"


def draw_prf(data: PRFBars) -> Figure:
    """Best Rocchio against SoftCentroid per encoder on one task."""
    fig = _new_figure(max(5.5, 1.5 * len(data.bars) + 2.5), 4.4)
    ax = fig.add_subplot()
    _prf_panel(ax, data, 8)
    ax.set_ylabel("ΔnDCG@10 over P0")
    ax.set_title(
        f"{data.task}: SoftCentroid against\nthe best of {data.n_rocchio} Rocchio configurations",
        fontsize=10,
    )
    ax.legend(fontsize=8, loc="best")
    return fig


def caption_prf(data: PRFBars) -> str:
    """What the PRF bars show."""
    return (
        f"ΔnDCG@10 over P0 on {data.task} per encoder: the best of {data.n_rocchio} Rocchio "
        "configurations in the matrix (its (K, β) under the encoder's name; 'default' is the "
        "plain Rocchio) against SoftCentroid at its default. * marks a cell whose "
        "paired-bootstrap 95% CI excludes 0."
    )


def draw_prf_grid(data: PRFGrid) -> Figure:
    """:func:`draw_prf` for every held-out task, as small multiples."""
    n = len(data.panels)
    cols = min(3, n)
    rows = math.ceil(n / cols)
    fig = _new_figure(4.2 * cols, 3.2 * rows + 0.4)
    axes = fig.subplots(rows, cols, squeeze=False)
    for k, ax in enumerate(axes.flat):
        if k >= n:
            ax.set_visible(False)
            continue
        _prf_panel(ax, data.panels[k], 6.5)
        ax.set_title(data.panels[k].task, fontsize=9)
    axes.flat[0].legend(fontsize=7)
    fig.suptitle("SoftCentroid against the best Rocchio configuration, every held-out task")
    return fig


def caption_prf_grid(data: PRFGrid) -> str:
    """What the PRF small multiples show."""
    return (
        f"The Rocchio-against-SoftCentroid bars on each of {len(data.panels)} held-out tasks "
        "(each panel its own y scale); * marks a significant cell."
    )


# --- the registry ----------------------------------------------------------------------------


@dataclass(frozen=True)
class FigureSpec:
    """How one figure is drawn: its data type, drawing function and caption."""

    name: str
    title: str
    data_type: type
    draw: Callable[[Any], Figure]
    caption: Callable[[Any], str]


FIGURES: Registry[FigureSpec] = Registry("figure")

for _spec in (
    FigureSpec("pareto", "Search frontier", ParetoData, draw_pareto, caption_pareto),
    FigureSpec(
        "trajectory", "Search trajectory", TrajectoryData, draw_trajectory, caption_trajectory
    ),
    FigureSpec("heatmap", "Held-out Δ heat-map", HeatmapData, draw_heatmap, caption_heatmap),
    FigureSpec(
        "encoder_bars",
        "Held-out transfer per encoder",
        EncoderBars,
        draw_encoder_bars,
        caption_encoder_bars,
    ),
    FigureSpec(
        "encoder_bars_all",
        "Held-out transfer per encoder, every program",
        EncoderBarsGrid,
        draw_encoder_bars_grid,
        caption_encoder_bars_grid,
    ),
    FigureSpec(
        "train_vs_test",
        "Test-time against training-time compute",
        TrainVsTestData,
        draw_train_vs_test,
        caption_train_vs_test,
    ),
    FigureSpec("prf", "SoftCentroid against the best Rocchio", PRFBars, draw_prf, caption_prf),
    FigureSpec(
        "prf_tasks",
        "SoftCentroid against the best Rocchio, every held-out task",
        PRFGrid,
        draw_prf_grid,
        caption_prf_grid,
    ),
):
    FIGURES.register(_spec.name, _spec)


def render(name: str, data: FigureData) -> Figure:
    """Draw figure ``name`` from its data record."""
    spec = FIGURES.get(name)
    if not isinstance(data, spec.data_type):
        raise TypeError(
            f"figure {name!r} draws {spec.data_type.__name__}, got {type(data).__name__}"
        )
    return spec.draw(data)


@dataclass(frozen=True)
class SavedFigure:
    """A figure written to disk, with its PNG bytes (for embedding)."""

    name: str
    png: Path
    svg: Path
    png_bytes: bytes


def save(fig: Figure, folder: Path, name: str) -> SavedFigure:
    """Write ``fig`` as ``folder/<name>.png`` and ``folder/<name>.svg``."""
    folder.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    png = folder / f"{name}.png"
    png.write_bytes(buf.getvalue())
    svg = folder / f"{name}.svg"
    fig.savefig(svg, format="svg", metadata={"Date": None})
    return SavedFigure(name, png, svg, buf.getvalue())
