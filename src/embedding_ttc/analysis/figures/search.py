"""Drawing the search figures: the Pareto frontier (Fig. 2) and the trajectory (App. B)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from embedding_ttc.analysis.figure_data.search import ParetoData, TrajectoryData
from embedding_ttc.analysis.figures.style import (
    DOMINATED,
    FRONTIER,
    label_points,
    new_figure,
    zero_line,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def draw_pareto(data: ParetoData) -> Figure:
    """Mean Δ against cost for every evaluated program; the Pareto set and its curve."""
    fig = new_figure(7.0, 4.6)
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
    chosen = [p for p in data.points if p.transfer_admitted]
    if chosen:
        ax.scatter(
            [p.cost_ratio for p in chosen],
            [p.mean_delta for p in chosen],
            marker="*",
            s=140,
            facecolor="none",
            edgecolor="black",
            linewidth=0.9,
            label=f"admitted by the transfer rule ({len(chosen)})",
            zorder=6,
        )
    ax.scatter([1.0], [0.0], marker="D", s=30, color="black", label="P0", zorder=5)
    zero_line(ax)
    ax.set_xlabel("cost ratio c (encoder calls relative to P0)")
    ax.set_ylabel(f"mean ΔnDCG@10 over {data.n_tasks} discovery tasks")
    title = f"Search frontier: {len(data.points)} evaluated programs"
    ax.set_title(f"{title}\n{data.label}" if data.label else title, fontsize=10)
    ax.margins(x=0.12, y=0.1)
    ax.grid(alpha=0.25)
    ax.legend(fontsize=8, loc="best")
    label_points(
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
    chosen = sum(p.transfer_admitted for p in data.points)
    stars = (
        f" Stars mark the {chosen} program(s) the transfer rule admits against the run's "
        "objective (validation queries improve, no task loses on them)."
        if chosen
        else ""
    )
    return (
        f"Mean ΔnDCG@10 on the {data.n_tasks} discovery tasks against cost ratio c for the "
        f"{len(data.points)} evaluated programs of the search. Blue points are the "
        f"{len(data.frontier)} Pareto-optimal programs, grey points are dominated; the curve "
        f"joins the frontier from P0.{stars} In-search measurements.{skipped}"
    )


def draw_trajectory(data: TrajectoryData) -> Figure:
    """The 2-D layout of per-task Δ vectors, by generation and by cost; the frontier path."""
    fig = new_figure(11.0, 4.6)
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
        label_points(
            ax, [p.x for p in path], [p.y for p in path], [p.program_id for p in path], clear=9
        )
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
