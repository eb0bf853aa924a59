"""Drawing the held-out transfer figures: the Δ heat-map (Fig. 3) and the per-encoder bars."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from embedding_ttc.analysis.figure_data.transfer import EncoderBars, EncoderBarsGrid, HeatmapData
from embedding_ttc.analysis.figures.style import (
    GAIN,
    LOSS,
    new_figure,
    pad_xlim,
    pad_ylim,
    zero_line,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def draw_heatmap(data: HeatmapData) -> Figure:
    """One programs × tasks panel per encoder, colour scaled per task column."""
    import numpy as np
    from matplotlib import colormaps

    n_panels, n_rows, n_cols = len(data.panels), len(data.programs), len(data.tasks)
    width = 2.0 + n_panels * (0.62 * n_cols + 0.5)
    fig = new_figure(max(width, 6.0), 1.9 + 0.34 * n_rows)
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


def _bars(ax: Axes, data: EncoderBars, fontsize: float, *, ticks: bool = True) -> None:
    """One bar per encoder (none where the program has no cell), win-rate at its end."""
    heights = [b.median_delta if b.cells else 0.0 for b in data.bars]
    ax.bar(
        range(len(data.bars)),
        heights,
        color=[GAIN if h > 0 else LOSS for h in heights],
        width=0.6,
    )
    zero_line(ax)
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
    pad_xlim(ax, len(data.bars))
    ax.grid(axis="y", alpha=0.25)


def draw_encoder_bars(data: EncoderBars) -> Figure:
    """Median held-out Δ of one program per encoder, win-rate on each bar."""
    fig = new_figure(max(5.5, 1.3 * len(data.bars) + 2.5), 4.2)
    ax = fig.add_subplot()
    _bars(ax, data, 8)
    pad_ylim(ax, [b.median_delta for b in data.bars if b.cells])
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
    fig = new_figure(3.2 * cols, 2.4 * rows + 1.2)
    axes = fig.subplots(rows, cols, sharex=True, sharey=True, squeeze=False)
    for k, ax in enumerate(axes.flat):
        if k >= n:
            ax.set_visible(False)
            continue
        lowest = k + cols >= n  # the lowest panel of its column carries the encoder names
        _bars(ax, data.panels[k], 6.5)
        ax.tick_params(axis="x", labelbottom=lowest)
        ax.set_title(data.panels[k].program, fontsize=9)
    pad_ylim(axes.flat[0], [b.median_delta for p in data.panels for b in p.bars if b.cells], 0.25)
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
