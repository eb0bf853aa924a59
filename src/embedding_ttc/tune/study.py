"""The tune study's table: one row per committed tune run, read from its records.

Each run folder under the study's root (``results/tune/<task>/``) that has its test report
gives a row: P0's and the tuned fusion's test nDCG@10, the tuned fusion's configuration, the
pick, the pick's margin over the tuned fusion on the test queries with its paired bootstrap
95 % interval, and the served milliseconds per query of P0 and the pick. Computation
(:func:`study_rows`) is apart from rendering (:func:`render_study`).
"""

from __future__ import annotations

import json
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
    wins = sum(r.margin > 0.001 for r in rows)
    below = sum(r.ci_high < 0.0 for r in rows)
    tail = (
        f"\n{len(rows)} tasks; the pick beats the tuned fusion by more than 0.001 on {wins}, "
        f"its interval lies below zero on {below}.\n"
    )
    return head + body + tail


def write_study(root: Path | str) -> Path:
    """Write the study's table as ``root/table.md`` (whole, or not at all); its path."""
    from embedding_ttc.durable import write_atomic

    root = Path(root)
    path = root / STUDY_TABLE
    write_atomic(path, render_study(study_rows(root)))
    return path
