"""Test-time against training-time compute (App. C, Fig. 6).

Left: the programs' held-out cost ratio against their pooled median held-out Δ, with the
learned head at c = 1. Right: the learned heads' in-domain Δ against their held-out Δ per
encoder, beside the best program's held-out median.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from embedding_ttc.analysis.cells import Cell
from embedding_ttc.analysis.figure_data.base import Skipped, headline_programs
from embedding_ttc.analysis.heads import LEARNED_HEAD, HeadRecord
from embedding_ttc.analysis.stats import median_or_nan, win_rate
from embedding_ttc.analysis.transfer_report import TransferReport


@dataclass(frozen=True)
class CostPoint:
    """A program (or the learned head) at its held-out cost ratio and pooled median Δ."""

    program: str
    cost_ratio: float
    median_delta: float
    cells: int


@dataclass(frozen=True)
class HeadPoint:
    """The chosen learned head of one encoder: in-domain Δ against held-out Δ.

    Attributes:
        encoder: the encoder the head was trained on.
        family: the chosen head family (from its record; ``LearnedHead`` without one).
        in_domain_delta: mean Δ over the discovery tasks (``None`` when not measured).
        in_domain_source: where ``in_domain_delta`` comes from.
        heldout_median: median Δ of the LearnedHead cells over the held-out tasks.
        heldout_cells: how many held-out cells that median is over.
        heldout_win_rate: fraction of those cells won.

    """

    encoder: str
    family: str
    in_domain_delta: float | None
    in_domain_source: str
    heldout_median: float | None
    heldout_cells: int
    heldout_win_rate: float | None


@dataclass(frozen=True)
class TrainVsTestData:
    """Test-time against training-time compute (App. C, Fig. 6).

    Attributes:
        programs: headline programs at (held-out c, pooled median held-out Δ).
        head: the learned head at c = 1, pooled over encoders (``None`` without its cells).
        best: the program with the highest pooled median held-out Δ (the dashed line).
        heads: the right panel, one point per encoder; empty when there are no learned heads.
        note: why the right panel is absent, or what its in-domain values are measured on.

    """

    programs: tuple[CostPoint, ...]
    head: CostPoint | None
    best: CostPoint | None
    heads: tuple[HeadPoint, ...]
    note: str


def _in_domain(
    encoder: str,
    record: HeadRecord | None,
    cells: Sequence[Cell],
    discovery_tasks: Sequence[str],
) -> tuple[float | None, str]:
    """The head's mean in-domain Δ, from its discovery cells or from its record."""
    own = [
        c.delta
        for c in cells
        if c.program == LEARNED_HEAD and c.encoder == encoder and c.task in discovery_tasks
    ]
    if own:
        return float(statistics.fmean(own)), f"{len(own)} LearnedHead cells on discovery tasks"
    chosen = record.family(record.chosen) if record is not None else None
    if chosen is None or chosen.discovery_ndcg_at_10 is None:
        return None, "no discovery measurement"
    baseline = {c.task: c.comparison.baseline_ndcg_at_10 for c in cells if c.encoder == encoder}
    if not discovery_tasks or any(t not in baseline for t in discovery_tasks):
        return None, "head record without P0's discovery nDCG@10 on every discovery task"
    p0 = statistics.fmean(baseline[t] for t in discovery_tasks)
    return (
        chosen.discovery_ndcg_at_10 - p0,
        f"head record's discovery nDCG@10 − P0's mean over {len(discovery_tasks)} tasks",
    )


def _head_points(
    report: TransferReport,
    cells: Sequence[Cell],
    heads: Sequence[HeadRecord],
    discovery_tasks: Sequence[str],
) -> tuple[HeadPoint, ...]:
    records = {h.encoder: h for h in heads}
    with_cells = {c.encoder for c in cells if c.program == LEARNED_HEAD}
    encoders = [e for e in report.encoders if e in records or e in with_cells]
    encoders += [e for e in records if e not in encoders]
    points = []
    for e in encoders:
        held = [
            c.delta
            for c in cells
            if c.program == LEARNED_HEAD and c.encoder == e and c.task in report.tasks
        ]
        in_domain, source = _in_domain(e, records.get(e), cells, discovery_tasks)
        if in_domain is None and not held:
            continue
        points.append(
            HeadPoint(
                encoder=e,
                family=records[e].chosen if e in records else LEARNED_HEAD,
                in_domain_delta=in_domain,
                in_domain_source=source,
                heldout_median=median_or_nan(held) if held else None,
                heldout_cells=len(held),
                heldout_win_rate=win_rate(held, report.threshold) if held else None,
            )
        )
    return tuple(points)


def train_vs_test_data(
    report: TransferReport,
    cells: Sequence[Cell],
    heads: Sequence[HeadRecord],
    *,
    heads_note: str = "",
) -> TrainVsTestData | Skipped:
    """Both panels of the training-time against test-time figure.

    Args:
        report: the transfer report (programs' cost and pooled median held-out Δ).
        cells: every cell found, including ``LearnedHead`` cells and discovery cells of any
            encoder (the report's own cells hold only its layout).
        heads: the learned-head records read from ``OUT/heads``.
        heads_note: why head records are missing or unreadable, for the note.

    """
    lines = {ln.program: ln for ln in report.lines}
    programs = tuple(
        CostPoint(p, lines[p].cost_ratio, lines[p].median_delta, lines[p].n_cells)
        for p in headline_programs(report)
        if p in lines and lines[p].n_cells
    )
    if not programs:
        return Skipped("train_vs_test", "no held-out cell of any program")
    pooled_head = [
        c.delta
        for c in cells
        if c.program == LEARNED_HEAD and c.encoder in report.encoders and c.task in report.tasks
    ]
    head = (
        CostPoint(LEARNED_HEAD, 1.0, median_or_nan(pooled_head), len(pooled_head))
        if pooled_head
        else None
    )
    best = max(programs, key=lambda p: p.median_delta)
    discovery = report.discovery_tasks
    points = _head_points(report, cells, heads, discovery)
    if points:
        sources = sorted({p.in_domain_source for p in points})
        note = "in-domain Δ: " + "; ".join(sources)
    else:
        why = heads_note or (
            f"no learned heads: no OUT/heads/<encoder>.json record and no {LEARNED_HEAD} cells"
        )
        note = f"right panel omitted: {why}"
    return TrainVsTestData(programs, head, best, points, note)
