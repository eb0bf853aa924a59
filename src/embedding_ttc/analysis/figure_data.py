"""What each figure of the transfer study draws: pure computation, no plotting library.

Every builder turns records — search ledger lines, transfer cells and their
:class:`~embedding_ttc.analysis.transfer_report.TransferReport`, learned-head records — into a
frozen dataclass holding exactly the numbers one figure shows, or a :class:`Skipped` that says
why the figure cannot be drawn. :mod:`embedding_ttc.analysis.figures` renders them; the
paper's figure each one follows is named beside it:

* ``pareto`` (Fig. 2): every evaluated program of a search as (cost ratio ``c``, mean discovery
  Δ), the Pareto set highlighted and the frontier curve drawn from P0 at (1, 0);
* ``trajectory`` (App. B): a 2-D layout of the programs' per-task Δ vectors (UMAP, seeded;
  PCA when there are too few programs, with the reason), coloured by generation and by cost,
  the Pareto programs joined in ascending cost;
* ``heatmap`` (Fig. 3): per held-out encoder, programs × held-out tasks of Δ, the colour of
  each task column scaled by that column's largest |Δ|, significant cells marked;
* ``encoder_bars`` / ``encoder_bars_all`` (App. C, Fig. 5): per encoder, the median held-out
  Δ of one program (every program) with its win-rate;
* ``train_vs_test`` (App. C, Fig. 6): programs' held-out cost ratio against their pooled
  median held-out Δ with the learned head at c = 1; and the learned heads' in-domain Δ against
  their held-out Δ per encoder, beside the best program's held-out median;
* ``prf`` / ``prf_tasks`` (App. D, Fig. 7): best Rocchio configuration against SoftCentroid per
  encoder, on one task (ArguAna by default) and on every held-out task.

Δ is always a cell's ΔnDCG@10 against its encoder's P0 (see :mod:`~embedding_ttc.analysis.
cells`); a win is Δ above the report's threshold, as in the tables.
"""

from __future__ import annotations

import math
import statistics
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from embedding_ttc.analysis.cells import Cell, CellKey
from embedding_ttc.analysis.comparisons import SOFT_CENTROID
from embedding_ttc.analysis.heads import LEARNED_HEAD as LEARNED_HEAD
from embedding_ttc.analysis.heads import HeadFamily as HeadFamily
from embedding_ttc.analysis.heads import HeadRecord as HeadRecord
from embedding_ttc.analysis.transfer_report import TransferReport
from embedding_ttc.errors import UnknownNameError
from embedding_ttc.registry import closest
from embedding_ttc.search.frontier import admitted, pareto
from embedding_ttc.search.interface import Status
from embedding_ttc.search.records import LedgerRecord

DEFAULT_PROGRAM = "LexicalHybridRRF"
"""The representative program of the per-encoder bars (App. C), when the matrix has it."""

DEFAULT_PRF_TASK = "birco_arguana"
"""The task of App. D's Rocchio-against-SoftCentroid bars."""

MIN_UMAP_POINTS = 5
"""Fewer programs than this are laid out by PCA: UMAP's neighbour graph needs a few points."""

FIGURE_NAMES: tuple[str, ...] = (
    "pareto",
    "trajectory",
    "heatmap",
    "encoder_bars",
    "encoder_bars_all",
    "train_vs_test",
    "prf",
    "prf_tasks",
)
"""Every figure of the report, in reading order (the renderers' registry has the same names)."""


@dataclass(frozen=True)
class Skipped:
    """A figure that cannot be drawn, and why (shown in the report in its place)."""

    figure: str
    reason: str


def is_variant(program: str) -> bool:
    """Whether ``program`` is a parametrised variant (``Rocchio:K=3,beta=0.5``)."""
    return ":" in program


def headline_programs(report: TransferReport) -> tuple[str, ...]:
    """The report's programs without parametrised variants and without the learned head."""
    return tuple(p for p in report.programs if not is_variant(p) and p != LEARNED_HEAD)


# --- (a) Pareto frontier of a search ----------------------------------------------------------


@dataclass(frozen=True)
class SearchPoint:
    """One evaluated program of a search ledger."""

    program_id: str
    generation: int
    cost_ratio: float
    mean_delta: float
    on_frontier: bool
    admitted: bool


@dataclass(frozen=True)
class ParetoData:
    """Every evaluated program at (c, mean Δ) and the Pareto set (paper Fig. 2).

    Attributes:
        points: every evaluated program, in ledger order.
        frontier: the Pareto programs, in ascending cost.
        curve: the frontier curve, (c, mean Δ) from P0 at (1, 0) through ``frontier``.
        n_tasks: discovery tasks each mean Δ is over.
        n_not_evaluated: ledger candidates without a measurement (rejected, crashed ...).
        label: what the search ran on (encoder, suite), for the title.

    """

    points: tuple[SearchPoint, ...]
    frontier: tuple[SearchPoint, ...]
    curve: tuple[tuple[float, float], ...]
    n_tasks: int
    n_not_evaluated: int
    label: str


def _evaluated(records: Sequence[LedgerRecord]) -> list[LedgerRecord]:
    return [
        r
        for r in records
        if r.status == Status.OK and r.mean_delta is not None and r.cost_ratio is not None
    ]


def _points(records: Sequence[LedgerRecord]) -> list[SearchPoint]:
    front = {r.program_id for r in pareto(records)}
    adm = {r.program_id for r in admitted(records)}
    return [
        SearchPoint(
            program_id=r.program_id,
            generation=r.generation,
            cost_ratio=float(r.cost_ratio or 0.0),
            mean_delta=float(r.mean_delta or 0.0),
            on_frontier=r.program_id in front,
            admitted=r.program_id in adm,
        )
        for r in _evaluated(records)
    ]


def pareto_data(records: Sequence[LedgerRecord], *, label: str = "") -> ParetoData | Skipped:
    """The Pareto figure of a ledger (:func:`~embedding_ttc.search.frontier.pareto` decides)."""
    points = _points(records)
    if not points:
        return Skipped("pareto", f"the ledger has no evaluated program ({len(records)} records)")
    by_id = {p.program_id: p for p in points}
    frontier = tuple(by_id[r.program_id] for r in pareto(records))
    curve = [(1.0, 0.0)]  # P0: one forward pass, Δ = 0 by definition
    curve += [
        (p.cost_ratio, p.mean_delta) for p in frontier if (p.cost_ratio, p.mean_delta) != (1.0, 0.0)
    ]
    tasks = {len(r.per_task_delta) for r in _evaluated(records)}
    return ParetoData(
        points=tuple(points),
        frontier=frontier,
        curve=tuple(curve),
        n_tasks=max(tasks) if tasks else 0,
        n_not_evaluated=len(records) - len(points),
        label=label,
    )


# --- (c) the search trajectory ------------------------------------------------------------------


@dataclass(frozen=True)
class Layout2D:
    """2-D coordinates of a set of vectors and how they were obtained."""

    coords: tuple[tuple[float, float], ...]
    method: Literal["umap", "pca"]
    note: str


def pca_2d(vectors: Sequence[Sequence[float]]) -> tuple[tuple[float, float], ...]:
    """The first two principal-component scores of ``vectors`` (Pearson 1901).

    Signs are fixed so that each component's largest-magnitude loading is positive, which makes
    the layout a function of the data alone. Missing components (fewer points or dimensions than
    two, or a constant set) are zeros.
    """
    x = np.asarray(vectors, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] == 0:
        return ()
    centred = x - x.mean(axis=0, keepdims=True)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    scores = np.zeros((x.shape[0], 2))
    for k in range(min(2, vt.shape[0])):
        axis = vt[k]
        if np.allclose(centred @ axis, 0.0):
            continue
        axis = axis if axis[np.argmax(np.abs(axis))] > 0 else -axis
        scores[:, k] = centred @ axis
    return tuple((float(a), float(b)) for a, b in scores)


def umap_2d(vectors: Sequence[Sequence[float]], seed: int) -> tuple[tuple[float, float], ...]:
    """A seeded UMAP layout (McInnes et al. 2018); raises ImportError without umap-learn.

    ``random_state`` makes UMAP single-threaded and the layout reproducible; the random
    initialisation avoids the spectral one, which fails on the tiny graphs of short searches.
    """
    import umap  # the report extra; imported here because it is slow to import

    x = np.asarray(vectors, dtype=np.float64)
    reducer = umap.UMAP(
        n_components=2,
        n_neighbors=max(2, min(15, x.shape[0] - 1)),
        min_dist=0.3,
        init="random",
        random_state=seed,
    )
    with warnings.catch_warnings():  # "n_jobs overridden by random_state": wanted here
        warnings.simplefilter("ignore", UserWarning)
        out = reducer.fit_transform(x)
    return tuple((float(a), float(b)) for a, b in out)


def layout_2d(vectors: Sequence[Sequence[float]], *, seed: int = 0) -> Layout2D:
    """Lay ``vectors`` out in 2-D: UMAP from :data:`MIN_UMAP_POINTS` points, else PCA."""
    n = len(vectors)
    if n < MIN_UMAP_POINTS:
        reason = f"PCA: {n} programs, UMAP needs at least {MIN_UMAP_POINTS}"
        return Layout2D(pca_2d(vectors), "pca", reason)
    try:
        coords = umap_2d(vectors, seed)
    except ImportError:
        reason = (
            "PCA: umap-learn is not installed (pip install 'embedding-ttc[report]' for the "
            "UMAP layout)"
        )
        return Layout2D(pca_2d(vectors), "pca", reason)
    return Layout2D(coords, "umap", f"UMAP, seed {seed}")


@dataclass(frozen=True)
class TrajectoryPoint:
    """One evaluated program placed by its per-task Δ vector."""

    program_id: str
    generation: int
    cost_ratio: float
    mean_delta: float
    x: float
    y: float
    on_frontier: bool


@dataclass(frozen=True)
class TrajectoryData:
    """The search trajectory of App. B.

    Attributes:
        points: every evaluated program with a Δ on each of ``tasks``, in ledger order.
        path: the Pareto programs' ids in ascending cost (the line through them).
        tasks: the tasks of the Δ vectors.
        method: ``umap`` or ``pca``.
        note: the layout's parameters, or why PCA replaced UMAP.

    """

    points: tuple[TrajectoryPoint, ...]
    path: tuple[str, ...]
    tasks: tuple[str, ...]
    method: Literal["umap", "pca"]
    note: str


def trajectory_data(records: Sequence[LedgerRecord], *, seed: int = 0) -> TrajectoryData | Skipped:
    """Place every evaluated program by its vector of per-task Δ (tasks common to all)."""
    evaluated = [r for r in _evaluated(records) if r.per_task_delta]
    if not evaluated:
        return Skipped("trajectory", "the ledger has no program with per-task Δ")
    common = set(evaluated[0].per_task_delta)
    for r in evaluated[1:]:
        common &= set(r.per_task_delta)
    tasks = tuple(t for t in evaluated[0].per_task_delta if t in common)
    if not tasks:
        return Skipped("trajectory", "the evaluated programs share no task")
    layout = layout_2d([[r.per_task_delta[t] for t in tasks] for r in evaluated], seed=seed)
    points = {p.program_id: p for p in _points(records)}
    placed = tuple(
        TrajectoryPoint(
            program_id=r.program_id,
            generation=r.generation,
            cost_ratio=points[r.program_id].cost_ratio,
            mean_delta=points[r.program_id].mean_delta,
            x=xy[0],
            y=xy[1],
            on_frontier=points[r.program_id].on_frontier,
        )
        for r, xy in zip(evaluated, layout.coords, strict=True)
    )
    ids = {p.program_id for p in placed}
    path = tuple(r.program_id for r in pareto(records) if r.program_id in ids)
    return TrajectoryData(placed, path, tasks, layout.method, layout.note)


# --- (b) per-encoder heat-map ---------------------------------------------------------------------


def normalise_columns(
    values: Sequence[Sequence[float | None]],
) -> tuple[tuple[float | None, ...], ...]:
    """Scale each column by its largest |value| into [−1, 1]; ``None`` stays ``None``.

    The sign is kept (green improvement, red regression) and 0 stays 0, so a column whose
    largest gain is +0.01 is as saturated as one whose largest is +0.2 — the paper's "colour is
    normalised per task (column) to maximise contrast". An all-zero column stays 0.
    """
    rows = [list(r) for r in values]
    n_cols = max((len(r) for r in rows), default=0)
    scale = []
    for j in range(n_cols):
        col = [abs(v) for r in rows if j < len(r) and (v := r[j]) is not None]
        scale.append(max(col, default=0.0))
    return tuple(
        tuple(
            None if v is None else (v / scale[j] if scale[j] > 0 else 0.0) for j, v in enumerate(r)
        )
        for r in rows
    )


@dataclass(frozen=True)
class HeatmapPanel:
    """One encoder's programs × tasks block.

    Attributes:
        encoder: the held-out encoder.
        deltas: Δ per [program][task]; ``None`` where the cell is missing.
        shade: ``deltas`` scaled per task column into [−1, 1] (:func:`normalise_columns`).
        significant: whether the cell's bootstrap 95% CI excludes 0.
        tasks_present: tasks with at least one cell.
        lifted_tasks: tasks on which at least one program wins.

    """

    encoder: str
    deltas: tuple[tuple[float | None, ...], ...]
    shade: tuple[tuple[float | None, ...], ...]
    significant: tuple[tuple[bool, ...], ...]
    tasks_present: int
    lifted_tasks: int


@dataclass(frozen=True)
class HeatmapData:
    """The held-out Δ heat-map (paper Fig. 3): one panel per encoder."""

    programs: tuple[str, ...]
    tasks: tuple[str, ...]
    panels: tuple[HeatmapPanel, ...]
    threshold: float


def heatmap_data(
    report: TransferReport, programs: Sequence[str] | None = None
) -> HeatmapData | Skipped:
    """Programs × held-out tasks per encoder (default rows: :func:`headline_programs`)."""
    rows = tuple(programs) if programs is not None else headline_programs(report)
    index = {c.key: c for c in report.cells}
    panels = []
    for e in report.encoders:
        cells = [[index.get(CellKey(e, t, p)) for t in report.tasks] for p in rows]
        if not any(c is not None for row in cells for c in row):
            continue
        deltas = tuple(tuple(_delta(c) for c in row) for row in cells)
        lifted = sum(
            1
            for j in range(len(report.tasks))
            if any(
                (d := deltas[i][j]) is not None and d > report.threshold for i in range(len(rows))
            )
        )
        panels.append(
            HeatmapPanel(
                encoder=e,
                deltas=deltas,
                shade=normalise_columns(deltas),
                significant=tuple(tuple(_significant(c) for c in row) for row in cells),
                tasks_present=sum(
                    1 for j in range(len(report.tasks)) if any(row[j] is not None for row in deltas)
                ),
                lifted_tasks=lifted,
            )
        )
    if not rows or not panels:
        return Skipped("heatmap", "no held-out cell of any program")
    return HeatmapData(rows, report.tasks, tuple(panels), report.threshold)


def _delta(cell: Cell | None) -> float | None:
    return None if cell is None else cell.delta_ndcg_at_10


def _significant(cell: Cell | None) -> bool:
    return cell is not None and (cell.bootstrap.significant_win or cell.bootstrap.significant_loss)


# --- (d) per-encoder bars -------------------------------------------------------------------------


@dataclass(frozen=True)
class EncoderBar:
    """One program on one encoder, over its held-out cells."""

    encoder: str
    median_delta: float
    win_rate: float
    wins: int
    cells: int


@dataclass(frozen=True)
class EncoderBars:
    """One program's per-encoder median held-out Δ and win-rate (App. C, Fig. 5)."""

    program: str
    bars: tuple[EncoderBar, ...]
    n_tasks: int
    threshold: float
    chosen_because: str


@dataclass(frozen=True)
class EncoderBarsGrid:
    """:class:`EncoderBars` of every headline program, for small multiples."""

    panels: tuple[EncoderBars, ...]


def choose_program(report: TransferReport, program: str | None = None) -> tuple[str, str]:
    """The program of the per-encoder bars and why it was chosen.

    Raises:
        UnknownNameError: when ``program`` is not in the report (the closest names suggested).

    """
    if program is not None:
        if program not in report.programs:
            near = closest(program, list(report.programs))
            hint = f" Did you mean: {', '.join(near)}?" if near else ""
            raise UnknownNameError(f"program {program!r} is not in the matrix.{hint}")
        return program, "asked for"
    if DEFAULT_PROGRAM in report.programs:
        return DEFAULT_PROGRAM, "the paper's representative program"
    ranked = [ln for ln in report.lines if ln.program in headline_programs(report) and ln.n_cells]
    if not ranked:
        return "", ""
    best = max(ranked, key=lambda ln: ln.median_delta)
    return best.program, f"highest pooled median Δ ({DEFAULT_PROGRAM} is not in the matrix)"


def _pooled(report: TransferReport, program: str, encoder: str | None = None) -> list[float]:
    return [
        c.delta_ndcg_at_10
        for c in report.cells
        if c.program == program
        and c.task in report.tasks
        and c.encoder in report.encoders
        and (encoder is None or c.encoder == encoder)
    ]


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else math.nan


def encoder_bars(report: TransferReport, program: str, why: str = "") -> EncoderBars:
    """Per held-out encoder: the median Δ of ``program`` over the held-out tasks, its win-rate."""
    bars = []
    for e in report.encoders:
        deltas = _pooled(report, program, e)
        wins = sum(1 for d in deltas if d > report.threshold)
        bars.append(
            EncoderBar(
                encoder=e,
                median_delta=_median(deltas),
                win_rate=wins / len(deltas) if deltas else math.nan,
                wins=wins,
                cells=len(deltas),
            )
        )
    return EncoderBars(program, tuple(bars), len(report.tasks), report.threshold, why)


def encoder_bars_grid(report: TransferReport) -> EncoderBarsGrid | Skipped:
    """:func:`encoder_bars` of every headline program that has a held-out cell."""
    panels = tuple(encoder_bars(report, p) for p in headline_programs(report) if _pooled(report, p))
    if not panels:
        return Skipped("encoder_bars_all", "no held-out cell of any program")
    return EncoderBarsGrid(panels)


# --- (e) training-time against test-time compute --------------------------------------------------


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
        c.delta_ndcg_at_10
        for c in cells
        if c.program == LEARNED_HEAD and c.encoder == encoder and c.task in discovery_tasks
    ]
    if own:
        return float(statistics.fmean(own)), f"{len(own)} LearnedHead cells on discovery tasks"
    chosen = record.family(record.chosen) if record is not None else None
    if chosen is None or chosen.discovery_ndcg_at_10 is None:
        return None, "no discovery measurement"
    baseline = {c.task: c.baseline_ndcg_at_10 for c in cells if c.encoder == encoder}
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
            c.delta_ndcg_at_10
            for c in cells
            if c.program == LEARNED_HEAD and c.encoder == e and c.task in report.tasks
        ]
        in_domain, source = _in_domain(e, records.get(e), cells, discovery_tasks)
        if in_domain is None and not held:
            continue
        wins = sum(1 for d in held if d > report.threshold)
        points.append(
            HeadPoint(
                encoder=e,
                family=records[e].chosen if e in records else LEARNED_HEAD,
                in_domain_delta=in_domain,
                in_domain_source=source,
                heldout_median=_median(held) if held else None,
                heldout_cells=len(held),
                heldout_win_rate=wins / len(held) if held else None,
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
        c.delta_ndcg_at_10
        for c in cells
        if c.program == LEARNED_HEAD and c.encoder in report.encoders and c.task in report.tasks
    ]
    head = (
        CostPoint(LEARNED_HEAD, 1.0, _median(pooled_head), len(pooled_head))
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


# --- (f) Rocchio against SoftCentroid ---------------------------------------------------------


@dataclass(frozen=True)
class PRFBar:
    """Best Rocchio configuration and SoftCentroid on one held-out cell."""

    encoder: str
    task: str
    rocchio_program: str
    rocchio_delta: float
    rocchio_significant: bool
    soft_centroid_delta: float
    soft_centroid_significant: bool


@dataclass(frozen=True)
class PRFBars:
    """App. D's bars on one task: per encoder, best Rocchio against SoftCentroid."""

    task: str
    bars: tuple[PRFBar, ...]
    n_rocchio: int


@dataclass(frozen=True)
class PRFGrid:
    """:class:`PRFBars` of every held-out task that has them."""

    panels: tuple[PRFBars, ...]


def _prf_bars(report: TransferReport) -> tuple[list[PRFBar], int] | Skipped:
    if report.prf is None:
        has_sc = SOFT_CENTROID in report.programs
        missing = "Rocchio variant" if has_sc else SOFT_CENTROID
        return Skipped("prf", f"the matrix has no {missing}: run rocchio-grid and SoftCentroid")
    index = {c.key: c for c in report.cells}
    bars = [
        PRFBar(
            encoder=c.encoder,
            task=c.task,
            rocchio_program=c.best_rocchio,
            rocchio_delta=c.rocchio_delta,
            rocchio_significant=_significant(index.get(CellKey(c.encoder, c.task, c.best_rocchio))),
            soft_centroid_delta=c.soft_centroid_delta,
            soft_centroid_significant=_significant(
                index.get(CellKey(c.encoder, c.task, SOFT_CENTROID))
            ),
        )
        for c in report.prf.cells
    ]
    return bars, len(report.prf.rocchio_programs)


def prf_bars(report: TransferReport, task: str = DEFAULT_PRF_TASK) -> PRFBars | Skipped:
    """Per encoder on ``task``: the best Rocchio configuration's Δ and SoftCentroid's."""
    found = _prf_bars(report)
    if isinstance(found, Skipped):
        return found
    bars, n = found
    mine = tuple(b for b in bars if b.task == task)
    if not mine:
        return Skipped("prf", f"no held-out cell on {task} has both SoftCentroid and a Rocchio")
    return PRFBars(task, mine, n)


def prf_grid(report: TransferReport) -> PRFGrid | Skipped:
    """:func:`prf_bars` of every held-out task that has both programs."""
    found = _prf_bars(report)
    if isinstance(found, Skipped):
        return Skipped("prf_tasks", found.reason)
    bars, n = found
    panels = tuple(
        PRFBars(t, tuple(b for b in bars if b.task == t), n)
        for t in report.tasks
        if any(b.task == t for b in bars)
    )
    return PRFGrid(panels)


# --- every figure -------------------------------------------------------------------------------

FigureData = (
    ParetoData
    | TrajectoryData
    | HeatmapData
    | EncoderBars
    | EncoderBarsGrid
    | TrainVsTestData
    | PRFBars
    | PRFGrid
)


@dataclass(frozen=True)
class FigureInputs:
    """Everything the figures are computed from.

    Attributes:
        report: the transfer report over the matrix's layout.
        cells: every cell found (learned-head and discovery cells of any encoder included).
        ledger: the search run's records, or ``None`` without a search run.
        ledger_note: where the ledger came from, or why there is none.
        search_label: what the search ran on, for the Pareto figure's title.
        heads: learned-head records.
        heads_note: why there are none, or which could not be read.
        program: the program of the per-encoder bars (``None``: :func:`choose_program`).
        prf_task: the task of the Rocchio-against-SoftCentroid bars.
        seed: the trajectory layout's seed.

    """

    report: TransferReport
    cells: tuple[Cell, ...] = ()
    ledger: tuple[LedgerRecord, ...] | None = None
    ledger_note: str = "no search run: pass --search-run RUN (or give it to transfer)"
    search_label: str = ""
    heads: tuple[HeadRecord, ...] = ()
    heads_note: str = ""
    program: str | None = None
    prf_task: str = DEFAULT_PRF_TASK
    seed: int = 0


def build_figures(inputs: FigureInputs) -> dict[str, FigureData | Skipped]:
    """The data of every figure in :data:`FIGURE_NAMES`, or why it is skipped."""
    report = inputs.report
    out: dict[str, FigureData | Skipped] = {}
    if inputs.ledger is None:
        out["pareto"] = Skipped("pareto", inputs.ledger_note)
        out["trajectory"] = Skipped("trajectory", inputs.ledger_note)
    else:
        out["pareto"] = pareto_data(inputs.ledger, label=inputs.search_label)
        out["trajectory"] = trajectory_data(inputs.ledger, seed=inputs.seed)
    out["heatmap"] = heatmap_data(report)
    program, why = choose_program(report, inputs.program)
    if program and _pooled(report, program):
        out["encoder_bars"] = encoder_bars(report, program, why)
    else:
        out["encoder_bars"] = Skipped("encoder_bars", "no held-out cell of any program")
    out["encoder_bars_all"] = encoder_bars_grid(report)
    out["train_vs_test"] = train_vs_test_data(
        report, inputs.cells or report.cells, inputs.heads, heads_note=inputs.heads_note
    )
    out["prf"] = prf_bars(report, inputs.prf_task)
    out["prf_tasks"] = prf_grid(report)
    return {name: out[name] for name in FIGURE_NAMES}
