"""The tune report's figure: test nDCG@10 of the pick, the tuned fusion, P0 and the fusions."""

from __future__ import annotations

from pathlib import Path

from embedding_ttc.analysis.figures.style import DOMINATED, DPI, FRONTIER, GAIN, new_figure
from embedding_ttc.tune.report import TuneReport, short

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
