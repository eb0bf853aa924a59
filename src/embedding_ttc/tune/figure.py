"""The tune figures: a run's and the study's.

A run's: test nDCG@10 of the pick, the tuned fusion, P0 and the fusions. The study's: each
task's margin of the pick over the tuned fusion, with its interval.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from embedding_ttc.analysis.figures.style import DOMINATED, DPI, FRONTIER, GAIN, LOSS, new_figure
from embedding_ttc.tune.report import TuneReport, short

if TYPE_CHECKING:
    from embedding_ttc.tune.study import StudyRow

OTHER_FUSIONS = 12
"""The best other fusions drawn beside the pick, the tuned fusion and P0."""

FIGURE_FILE = "figure.png"


def draw_report(report: TuneReport, out: Path) -> Path:
    """Draw the test nDCG@10 of each program with the pick's and fusions' intervals.

    Bars: mean nDCG@10 on the test queries; whiskers: the 95 % interval of the difference
    from the tuned fusion, placed on the tuned fusion's mean (so a whisker clear of the tuned
    fusion's line is a difference the bootstrap trusts).

    Raises:
        MissingExtraError: matplotlib is not installed (the ``report`` extra).

    """
    main = [r for r in report.rows if r.role != "fusion"]
    others = sorted((r for r in report.rows if r.role == "fusion"), key=lambda r: -r.ndcg)
    rows = sorted(main, key=lambda r: -r.ndcg) + others[:OTHER_FUSIONS]
    fig = new_figure(7.5, 0.32 * len(rows) + 1.4)
    ax = fig.add_subplot(1, 1, 1)
    base = report.row("tuned fusion").ndcg
    colours = {"pick": GAIN, "tuned fusion": FRONTIER, "P0": DOMINATED, "fusion": "#c9d6e8"}
    ys = list(range(len(rows)))[::-1]
    ax.barh(ys, [r.ndcg for r in rows], color=[colours[r.role] for r in rows])
    for y, r in zip(ys, rows, strict=True):
        if r.role in ("pick", "fusion"):
            ax.plot([base + r.ci_low, base + r.ci_high], [y, y], color="black", linewidth=1)
    ax.axvline(base, color=FRONTIER, linestyle=":", linewidth=1)
    ax.set_yticks(ys)
    ax.set_yticklabels([f"{r.role}: {short(r.name, 40)}" for r in rows], fontsize=7)
    ax.set_xlabel(f"nDCG@10 on {report.test_queries} test queries")
    ax.set_title(f"{report.task} · {report.encoder}", fontsize=9)
    path = out / FIGURE_FILE
    fig.savefig(path, dpi=DPI)
    return path


KIND_COLOURS = {"searched": GAIN, "library": FRONTIER, "fusion": DOMINATED}
"""The study figure's marker colour for each kind of pick."""


def draw_study(rows: list[StudyRow], path: Path) -> Path:
    """Draw each task's test margin of the pick over the tuned fusion, with its 95 % interval.

    One row per task: a dot at the margin (its colour the pick's kind: a searched program, a
    library program or the tuned fusion itself, whose margin is 0) and a whisker over the
    paired bootstrap interval; a whisker wholly left of the zero line is a loss the bootstrap
    trusts, and is drawn red. The file type follows ``path``'s suffix.

    Raises:
        MissingExtraError: matplotlib is not installed (the ``report`` extra).

    """
    fig = new_figure(6.5, 0.3 * len(rows) + 1.3)
    ax = fig.add_subplot(1, 1, 1)
    ys = list(range(len(rows)))[::-1]
    for y, r in zip(ys, rows, strict=True):
        whisker = LOSS if r.ci_high < 0 else "black"
        ax.plot([r.ci_low, r.ci_high], [y, y], color=whisker, linewidth=1)
        ax.plot([r.margin], [y], "o", color=KIND_COLOURS.get(r.pick_kind, DOMINATED), ms=5)
    ax.axvline(0.0, color=DOMINATED, linestyle=":", linewidth=1)
    ax.set_yticks(ys)
    ax.set_yticklabels([f"{r.task}: {short(r.pick, 24)}" for r in rows], fontsize=7)
    ax.set_xlabel("test nDCG@10, pick minus tuned fusion (95 % interval)")
    for kind, colour in KIND_COLOURS.items():
        ax.plot([], [], "o", color=colour, label=kind)
    ax.legend(fontsize=7, loc="lower right", title="pick", title_fontsize=7)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI)
    return path
