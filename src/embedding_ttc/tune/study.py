"""The tune study's table: one row per committed tune run, read from its records.

Each run folder under the study's root (``results/tune/<task>/``) that has its test report
gives a row: P0's and the tuned fusion's test nDCG@10, the tuned fusion's configuration, the
pick, the pick's margin over the tuned fusion on the test queries with its paired bootstrap
95 % interval, and the served milliseconds per query of P0 and the pick. Computation
(:func:`study_rows`) is apart from rendering (:func:`render_study`).
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path

from embedding_ttc.tune.records import PICK_FILE, TunePick, read_record
from embedding_ttc.tune.report import REPORT_DIR, read_report, short

STUDY_TABLE = "table.md"


@dataclass(frozen=True)
class StudyRow:
    """One task of the study (test-query numbers)."""

    task: str
    test_queries: int
    p0: float
    fusion: float
    fusion_program: str
    pick: str
    pick_kind: str
    margin: float
    ci_low: float
    ci_high: float
    p0_ms: float | None
    pick_ms: float | None
    wall_seconds: float


def study_rows(root: Path) -> list[StudyRow]:
    """A row for each run folder under ``root`` whose report is written, by task name."""
    rows = []
    for run in sorted(p for p in root.iterdir() if p.is_dir()):
        report = read_report(run / REPORT_DIR)
        pick = read_record(run / PICK_FILE, TunePick)
        if report is None or pick is None:
            continue
        chosen = report.row("pick") if pick.kind != "fusion" else report.row("tuned fusion")
        sessions = (run / "runs.jsonl").read_text(encoding="utf-8").splitlines()
        rows.append(
            StudyRow(
                task=report.task,
                test_queries=report.test_queries,
                p0=report.row("P0").ndcg,
                fusion=report.row("tuned fusion").ndcg,
                fusion_program=report.tuned_fusion,
                pick="tuned fusion" if pick.kind == "fusion" else pick.name,
                pick_kind=pick.kind,
                margin=chosen.delta,
                ci_low=chosen.ci_low,
                ci_high=chosen.ci_high,
                p0_ms=report.row("P0").served_ms,
                pick_ms=chosen.served_ms,
                wall_seconds=sum(json.loads(line)["seconds"] for line in sessions if line),
            )
        )
    return rows


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def render_study(rows: list[StudyRow]) -> str:
    """The study's Markdown table and a line that counts the picks that beat the fusion."""
    head = (
        "| task | test queries | P0 | tuned fusion | its configuration | pick | margin | "
        "95 % interval | P0 ms | pick ms | wall s |\n"
        "|---|---:|---:|---:|---|---|---:|---|---:|---:|---:|\n"
    )
    body = "".join(
        f"| {r.task} | {r.test_queries} | {r.p0:.4f} | {r.fusion:.4f} | "
        f"{short(r.fusion_program, 48)} | {r.pick} ({r.pick_kind}) | {r.margin:+.4f} | "
        f"[{r.ci_low:+.4f}, {r.ci_high:+.4f}] | {_ms(r.p0_ms)} | {_ms(r.pick_ms)} | "
        f"{r.wall_seconds:.0f} |\n"
        for r in rows
    )
    return head + body + "\n" + summarise(rows).sentence() + "\n"


@dataclass(frozen=True)
class StudySummary:
    """The study against its target (the issue's numbers, fixed before any run).

    Attributes:
        tasks: the tasks with a report.
        wins: tasks where the pick beats the tuned fusion by more than 0.001 on the test queries.
        median_margin: the median margin over the tuned fusion.
        below_zero: tasks whose interval lies wholly below zero.
        within_time: tasks whose pick is served within :data:`TARGET_SLOWDOWN` times P0.
        timed: tasks with both served times measured.

    """

    tasks: int
    wins: int
    median_margin: float
    below_zero: int
    within_time: int
    timed: int

    def sentence(self) -> str:
        """One line of the study's numbers, as the docs and the table state them."""
        return (
            f"{self.tasks} tasks; the pick beats the tuned fusion by more than 0.001 on "
            f"{self.wins}, the median margin is {self.median_margin:+.4f}, the interval lies "
            f"below zero on {self.below_zero}, and the pick is served within "
            f"{TARGET_SLOWDOWN:g} × P0's time on {self.within_time} of {self.timed}."
        )


TARGET_SLOWDOWN = 1.3
"""The target's served-time bar: the pick at most this many times P0's time per query."""


def summarise(rows: list[StudyRow]) -> StudySummary:
    """The study's counts against its target."""
    timed = [r for r in rows if r.p0_ms and r.pick_ms is not None]
    return StudySummary(
        tasks=len(rows),
        wins=sum(r.margin > 0.001 for r in rows),
        median_margin=statistics.median(r.margin for r in rows) if rows else 0.0,
        below_zero=sum(r.ci_high < 0.0 for r in rows),
        within_time=sum(
            r.pick_ms <= TARGET_SLOWDOWN * r.p0_ms  # type: ignore[operator]
            for r in timed
        ),
        timed=len(timed),
    )


def write_study(root: Path | str) -> Path:
    """Write the study's table as ``root/table.md`` (whole, or not at all); its path.

    The figure is :func:`~embedding_ttc.tune.figure.draw_study` of the same rows.
    """
    from embedding_ttc.durable import write_atomic

    root = Path(root)
    path = root / STUDY_TABLE
    write_atomic(path, render_study(study_rows(root)))
    return path
