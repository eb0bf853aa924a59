"""What every figure shares: colours, a blank Agg figure, the zero line, labels, axis padding."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from embedding_ttc.errors import MissingExtraError

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


def new_figure(width: float, height: float) -> Figure:
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


def zero_line(ax: Axes) -> None:
    """A dotted horizontal line at 0, behind the data."""
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


def label_points(
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


def pad_ylim(ax: Axes, values: Sequence[float], pad: float = 0.18) -> None:
    """Y limits around ``values`` and 0 with room for the labels at the bars' ends."""
    finite = [v for v in values if math.isfinite(v)]
    lo, hi = min(0.0, *finite), max(0.0, *finite)
    span = (hi - lo) or 0.01
    ax.set_ylim(lo - pad * span, hi + pad * span)


def pad_xlim(ax: Axes, n: int) -> None:
    """X limits that keep a few bars narrow (one bar does not fill the axes)."""
    half = max(0.7, (3 - n) / 2 + 0.6)
    ax.set_xlim(-half, n - 1 + half)
