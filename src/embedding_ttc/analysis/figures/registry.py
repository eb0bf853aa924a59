"""Every figure by name: how it is drawn and captioned, drawing it, and saving it to disk."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from embedding_ttc.analysis.figure_data.build import FigureData
from embedding_ttc.analysis.figure_data.prf import PRFBars, PRFGrid
from embedding_ttc.analysis.figure_data.search import ParetoData, TrajectoryData
from embedding_ttc.analysis.figure_data.train_vs_test import TrainVsTestData
from embedding_ttc.analysis.figure_data.transfer import EncoderBars, EncoderBarsGrid, HeatmapData
from embedding_ttc.analysis.figures.prf import (
    caption_prf,
    caption_prf_grid,
    draw_prf,
    draw_prf_grid,
)
from embedding_ttc.analysis.figures.search import (
    caption_pareto,
    caption_trajectory,
    draw_pareto,
    draw_trajectory,
)
from embedding_ttc.analysis.figures.style import DPI
from embedding_ttc.analysis.figures.train_vs_test import caption_train_vs_test, draw_train_vs_test
from embedding_ttc.analysis.figures.transfer import (
    caption_encoder_bars,
    caption_encoder_bars_grid,
    caption_heatmap,
    draw_encoder_bars,
    draw_encoder_bars_grid,
    draw_heatmap,
)
from embedding_ttc.registry import Registry

if TYPE_CHECKING:
    from matplotlib.figure import Figure


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
