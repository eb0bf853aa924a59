"""Cell-by-cell comparisons over the held-out block: the oracle, App. D's PRF and §4.4's fusion.

Each takes the held-out (encoder × task) :class:`CellBlock` of a
:class:`~embedding_ttc.analysis.transfer_report.TransferReport` and compares programs on the
same cells (every Δ is a cell's ΔnDCG@10 against its encoder's P0; a win is Δ > threshold):

* :func:`compute_oracle` — per cell, the best Δ over a program set (the frontier), and per
  encoder how many cells it lifts and its mean best Δ;
* :func:`compare_prf` — per cell, the best Rocchio configuration (as the paper picks the best
  of its grid per cell) against SoftCentroid;
* :func:`compare_fusion` — the vanilla BM25DenseRRF against LexicalHybridRRF: win-rate and
  median per encoder and pooled.
"""

from __future__ import annotations

from dataclasses import dataclass

from embedding_ttc.analysis.cells import BASELINE, Cell, CellKey
from embedding_ttc.analysis.stats import mean_or_nan, median_or_nan, win_rate
from embedding_ttc.evaluation.comparison import WTL
from embedding_ttc.programs.library.rocchio import ROCCHIO_BETA, ROCCHIO_K

SOFT_CENTROID = "SoftCentroid"
ROCCHIO = "Rocchio"
DEFAULT_ROCCHIO = f"{ROCCHIO}:K={ROCCHIO_K},beta={ROCCHIO_BETA}"  # the grid point ROCCHIO is
FUSION_PAIR = ("BM25DenseRRF", "LexicalHybridRRF")


@dataclass(frozen=True)
class CellBlock:
    """Cells of an encoders × tasks block, looked up by program."""

    index: dict[CellKey, Cell]
    encoders: tuple[str, ...]
    tasks: tuple[str, ...]

    def get(self, encoder: str, task: str, program: str) -> Cell | None:
        """The cell of ``program`` on (``encoder``, ``task``), if present."""
        return self.index.get(CellKey(encoder, task, program))

    def of(self, program: str, encoder: str | None = None) -> list[Cell]:
        """The present cells of ``program`` in the block (on ``encoder`` alone, if given)."""
        encs = self.encoders if encoder is None else (encoder,)
        found = (self.get(e, t, program) for e in encs for t in self.tasks)
        return [c for c in found if c is not None]


def head_to_head(program: str, other: str, held: CellBlock, threshold: float) -> WTL | None:
    """``program`` against ``other``, cell by cell: the nDCG@10 difference at ``threshold``.

    Over the cells of the block where both have a score; P0 (:data:`BASELINE`) has no cells of
    its own and is read from the baseline side of the other's. ``None`` without a common cell.
    """
    gaps = []
    for e in held.encoders:
        for t in held.tasks:
            mine, theirs = _ndcg(held, e, t, program, other), _ndcg(held, e, t, other, program)
            if mine is not None and theirs is not None:
                gaps.append(mine - theirs)
    return WTL.count(gaps, threshold) if gaps else None


def _ndcg(held: CellBlock, encoder: str, task: str, name: str, partner: str) -> float | None:
    """``name``'s nDCG@10 on a cell; P0's is the baseline side of ``partner``'s cell."""
    if name == BASELINE:
        cell = held.get(encoder, task, partner)
        return None if cell is None else cell.comparison.baseline_ndcg_at_10
    cell = held.get(encoder, task, name)
    return None if cell is None else cell.comparison.ndcg_at_10


@dataclass(frozen=True)
class OracleCell:
    """The best program of the oracle set on one held-out cell."""

    encoder: str
    task: str
    program: str
    delta: float


@dataclass(frozen=True)
class OracleEncoder:
    """The oracle on one encoder: cells lifted (best Δ > threshold) and the mean best Δ."""

    encoder: str
    lifted: int
    cells: int
    mean_best_delta: float


@dataclass(frozen=True)
class Oracle:
    """Per held-out cell, the best Δ over ``programs``."""

    programs: tuple[str, ...]
    cells: tuple[OracleCell, ...]
    per_encoder: tuple[OracleEncoder, ...]

    @property
    def lifted(self) -> int:
        """Held-out cells the oracle lifts."""
        return sum(e.lifted for e in self.per_encoder)


@dataclass(frozen=True)
class PRFCell:
    """Best Rocchio against SoftCentroid on one held-out cell (App. D)."""

    encoder: str
    task: str
    best_rocchio: str
    rocchio_delta: float
    soft_centroid_delta: float
    soft_centroid_p_value: float

    @property
    def advantage(self) -> float:
        """SoftCentroid's Δ minus the best Rocchio's Δ."""
        return self.soft_centroid_delta - self.rocchio_delta


@dataclass(frozen=True)
class PRFEncoder:
    """App. D per encoder: mean best-Rocchio Δ, mean SoftCentroid Δ, cells SoftCentroid leads."""

    encoder: str
    cells: int
    mean_rocchio_delta: float
    mean_soft_centroid_delta: float
    soft_centroid_ahead: int

    @property
    def mean_advantage(self) -> float:
        """Mean SoftCentroid − best Rocchio over the encoder's cells."""
        return self.mean_soft_centroid_delta - self.mean_rocchio_delta


@dataclass(frozen=True)
class PRFComparison:
    """SoftCentroid against the best of the Rocchio variants in the matrix, cell by cell."""

    rocchio_programs: tuple[str, ...]
    cells: tuple[PRFCell, ...]
    per_encoder: tuple[PRFEncoder, ...]


@dataclass(frozen=True)
class FusionLine:
    """One fusion program's win-rate and median Δ per encoder and pooled."""

    program: str
    win_rate: dict[str, float]
    median_delta: dict[str, float]
    pooled_win_rate: float
    pooled_median_delta: float
    n_cells: int


@dataclass(frozen=True)
class FusionComparison:
    """BM25DenseRRF and LexicalHybridRRF side by side on the held-out cells."""

    lines: tuple[FusionLine, ...]


def compute_oracle(held: CellBlock, programs: tuple[str, ...], threshold: float) -> Oracle:
    """Per cell of ``held``, the best Δ over ``programs``; per encoder, the cells it lifts."""
    cells: list[OracleCell] = []
    per_encoder: list[OracleEncoder] = []
    for e in held.encoders:
        mine: list[OracleCell] = []
        for t in held.tasks:
            present = [c for c in (held.get(e, t, p) for p in programs) if c is not None]
            if present:
                # Highest Δ; a tie goes to the program listed first.
                best = max(present, key=lambda c: c.delta)
                mine.append(OracleCell(e, t, best.program, best.delta))
        cells += mine
        per_encoder.append(
            OracleEncoder(
                encoder=e,
                lifted=WTL.count((c.delta for c in mine), threshold).wins,
                cells=len(mine),
                mean_best_delta=mean_or_nan([c.delta for c in mine]),
            )
        )
    return Oracle(programs, tuple(cells), tuple(per_encoder))


def compare_prf(held: CellBlock, rocchios: tuple[str, ...], threshold: float) -> PRFComparison:
    """Per cell with SoftCentroid and a Rocchio variant, SoftCentroid against the best of them."""
    cells: list[PRFCell] = []
    for e in held.encoders:
        for t in held.tasks:
            sc = held.get(e, t, SOFT_CENTROID)
            present = [c for c in (held.get(e, t, p) for p in rocchios) if c is not None]
            if sc is None or not present:
                continue
            best = max(present, key=lambda c: c.delta)
            cells.append(
                PRFCell(
                    encoder=e,
                    task=t,
                    best_rocchio=best.program,
                    rocchio_delta=best.delta,
                    soft_centroid_delta=sc.delta,
                    soft_centroid_p_value=sc.bootstrap.p_value,
                )
            )
    per_encoder = []
    for e in held.encoders:
        mine = [c for c in cells if c.encoder == e]
        per_encoder.append(
            PRFEncoder(
                encoder=e,
                cells=len(mine),
                mean_rocchio_delta=mean_or_nan([c.rocchio_delta for c in mine]),
                mean_soft_centroid_delta=mean_or_nan([c.soft_centroid_delta for c in mine]),
                soft_centroid_ahead=WTL.count((c.advantage for c in mine), threshold).wins,
            )
        )
    return PRFComparison(rocchios, tuple(cells), tuple(per_encoder))


def compare_fusion(held: CellBlock, pair: tuple[str, ...], threshold: float) -> FusionComparison:
    """Each program of ``pair``: win-rate and median Δ per encoder and pooled."""
    lines = []
    for p in pair:
        per = {e: [c.delta for c in held.of(p, e)] for e in held.encoders}
        pooled = [d for ds in per.values() for d in ds]
        lines.append(
            FusionLine(
                program=p,
                win_rate={e: win_rate(ds, threshold) for e, ds in per.items()},
                median_delta={e: median_or_nan(ds) for e, ds in per.items()},
                pooled_win_rate=win_rate(pooled, threshold),
                pooled_median_delta=median_or_nan(pooled),
                n_cells=len(pooled),
            )
        )
    return FusionComparison(tuple(lines))
