"""Drawing Rocchio against SoftCentroid (App. D, Fig. 7): one task, or every held-out task."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from embedding_ttc.analysis.figure_data.prf import PRFBars, PRFGrid
from embedding_ttc.analysis.figures.style import (
    FRONTIER,
    ROCCHIO_COLOUR,
    new_figure,
    pad_xlim,
    pad_ylim,
    zero_line,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


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
    zero_line(ax)
    ticks = [f"{b.encoder}\nRocchio {_grid_point(b.rocchio_program)}" for b in data.bars]
    ax.set_xticks(pos, ticks, rotation=20, ha="right", fontsize=fontsize)
    pad_xlim(ax, len(data.bars))
    pad_ylim(ax, [v for b in data.bars for v in (b.rocchio_delta, b.soft_centroid_delta)], 0.25)
    ax.grid(axis="y", alpha=0.25)


def _grid_point(program: str) -> str:
    """``Rocchio:K=3,beta=0.5`` as ``K=3, β=0.5``; the plain program as ``default``."""
    params = program.partition(":")[2]
    return params.replace(",", ", ").replace("beta", "β") if params else "default"


def draw_prf(data: PRFBars) -> Figure:
    """Best Rocchio against SoftCentroid per encoder on one task."""
    fig = new_figure(max(5.5, 1.5 * len(data.bars) + 2.5), 4.4)
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
    fig = new_figure(4.2 * cols, 3.2 * rows + 0.4)
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
