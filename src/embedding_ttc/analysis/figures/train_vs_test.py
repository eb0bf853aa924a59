"""Drawing test-time against training-time compute (App. C, Fig. 6)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from embedding_ttc.analysis.figure_data.train_vs_test import TrainVsTestData
from embedding_ttc.analysis.figures.style import (
    FRONTIER,
    GAIN,
    HEAD_COLOUR,
    label_points,
    new_figure,
    zero_line,
)
from embedding_ttc.analysis.heads import LEARNED_HEAD

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


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
    zero_line(ax)
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
    zero_line(ax)
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
    fig = new_figure(12.0 if two else 6.5, 4.8)
    axes = fig.subplots(1, 2 if two else 1, squeeze=False)[0]
    _cost_panel(axes[0], data)
    if two:
        _heads_panel(axes[1], data)
    fig.suptitle("Test-time against training-time compute on the held-out tasks", fontsize=10)
    label_points(
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
