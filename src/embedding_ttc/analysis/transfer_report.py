"""The transfer report: computed once from cells, for the tables and figures to render.

:meth:`TransferReport.from_cells` is pure computation over
:class:`~embedding_ttc.analysis.cells.Cell` records; :mod:`embedding_ttc.analysis.tables`
renders it as Markdown, CSV and LaTeX, :mod:`embedding_ttc.analysis.figure_data` turns it into
figures. What is computed (every Δ is a cell's ΔnDCG@10, the mean over its queries of program
− P0; a win is Δ > 0.001, a loss Δ < −0.001, as in the paper's Table 2):

* per program, the paper's Table 2 layout: the discovery W/T/L over the discovery tasks on the
  discovery encoder, and the held-out W/T/L over the held-out tasks per held-out encoder; the
  held-out cost ratio ``c``, Σ(T_base + T_prog) / Σ T_base over the program's held-out cells
  (§3.3 sums calls before dividing);
* per program, pooled over every held-out (encoder, task) cell: the median Δ, the mean Δ and
  the win-rate (the paper's footnote to §4.2); the tasks whose Δ is a win on every held-out
  encoder (unanimously positive) or a loss on every one (unanimously negative);
* per program and encoder, the held-out tasks whose paired-bootstrap 95% CI excludes 0 above
  (significant wins) and below (significant losses);
* the oracle over a program set (the frontier), App. D's best Rocchio against SoftCentroid
  (when both are in the matrix) and §4.4's BM25DenseRRF against LexicalHybridRRF (when both
  are), cell by cell (:mod:`embedding_ttc.analysis.comparisons`).

Missing cells are left out of every count and listed in :attr:`TransferReport.missing`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from embedding_ttc.analysis.cells import BASELINE, Cell, CellKey
from embedding_ttc.analysis.comparisons import (
    DEFAULT_ROCCHIO,
    FUSION_PAIR,
    ROCCHIO,
    SOFT_CENTROID,
    CellBlock,
    FusionComparison,
    Oracle,
    PRFComparison,
    compare_fusion,
    compare_prf,
    compute_oracle,
    head_to_head,
)
from embedding_ttc.analysis.latency import LatencyRecord
from embedding_ttc.analysis.stats import (
    ALPHA,
    benjamini_hochberg,
    mean_or_nan,
    median_or_nan,
    win_rate,
)
from embedding_ttc.evaluation.comparison import (
    TIE_THRESHOLD,
    WTL,
    count_deep_losses,
)
from embedding_ttc.programs.catalog import REFERENCE_PROGRAM as REFERENCE
from embedding_ttc.programs.catalog import parse_name


def default_oracle(programs: Sequence[str]) -> list[str]:
    """The oracle's program set when none is given.

    The paper's frontier programs among ``programs`` (the ``frontier`` group), else every
    program but P0 and the learned head. The oracle asks how many cells *some frontier
    program* lifts (§4.2); baselines such as BM25, the Rocchio grid or the learned head are
    compared on their own rows instead.
    """
    from embedding_ttc.programs.catalog import FRONTIER

    frontier = [p for p in programs if p in FRONTIER]
    return frontier or [p for p in programs if p not in (BASELINE, "LearnedHead")]


@dataclass(frozen=True)
class ProgramTransfer:
    """One program's transfer summary.

    Attributes:
        program: the program name.
        cost_ratio: Σ(T_base + T_prog) / Σ T_base over its held-out cells (nan without any).
        discovery: W/T/L over the discovery tasks on the discovery encoder (``None`` when
            there is no discovery column).
        discovery_cost_ratio: Σ(T_base + T_prog) / Σ T_base over its discovery cells (nan
            without any: the cost ratio of the paper's Table 2, on the discovery suite).
        discovery_mean_delta: mean Δ over its discovery cells (nan without any).
        discovery_mean_ndcg: mean nDCG@10 over its discovery cells (nan without any).
        heldout: per held-out encoder, W/T/L over the held-out tasks.
        n_cells: held-out cells pooled.
        median_delta: median Δ over the pooled held-out cells (nan without any).
        mean_delta: mean Δ over the same cells.
        win_rate: fraction of those cells with Δ > threshold.
        unanimous_positive: held-out tasks won on every held-out encoder.
        unanimous_negative: held-out tasks lost on every held-out encoder.
        significant_wins: per encoder, held-out tasks whose bootstrap CI lies above 0.
        significant_losses: per encoder, held-out tasks whose bootstrap CI lies below 0.
        corrected_wins: per encoder, the significant wins that remain so after the
            Benjamini–Hochberg correction over the held-out cells of the table.
        corrected_losses: the same for the significant losses.
        query_time_cost_ratio: Σ query-time calls / Σ base query calls over the held-out
            cells (what a deployment pays per query; nan without any).
        worst_query: the lowest per-query Δ against P0 over every pooled held-out cell (the
            tail beside the median; nan without any).
        queries: the queries of its pooled held-out cells.
        deep_losses: those of them whose Δ against P0 is below ``-DEEP_LOSS`` (how often the
            tail is reached, beside how deep it goes).
        validation_delta: for a program a search discovered, its mean Δ over the validation
            part of the discovery queries (what the transfer rule selected on); ``None``
            otherwise.
        versus_reference: held-out cells won, tied and lost head to head against the
            reference program ``BM25DenseRRF`` (the program's nDCG@10 minus the reference's,
            per cell, at the tie threshold); ``None`` for the reference itself or without
            its cells.

    """

    program: str
    cost_ratio: float
    discovery: WTL | None
    heldout: dict[str, WTL]
    n_cells: int
    median_delta: float
    mean_delta: float
    win_rate: float
    unanimous_positive: tuple[str, ...]
    unanimous_negative: tuple[str, ...]
    significant_wins: dict[str, int]
    significant_losses: dict[str, int]
    corrected_wins: dict[str, int]
    corrected_losses: dict[str, int]
    query_time_cost_ratio: float
    worst_query: float
    versus_reference: WTL | None
    validation_delta: float | None = None
    queries: int = 0
    deep_losses: int = 0
    discovery_cost_ratio: float = float("nan")
    discovery_mean_delta: float = float("nan")
    discovery_mean_ndcg: float = float("nan")


@dataclass(frozen=True)
class TransferReport:
    """Everything the transfer tables show, computed from cells (see the module docstring).

    Attributes:
        encoders: held-out encoders, in column order.
        tasks: held-out tasks.
        programs: the programs reported (P0 excluded), in row order.
        discovery_encoder: the encoder of the discovery column, or ``None``.
        discovery_tasks: the discovery tasks.
        threshold: the win / tie / loss threshold on Δ.
        lines: one summary per program.
        oracle: the per-cell oracle over the oracle set.
        prf: App. D's comparison, when SoftCentroid and a Rocchio variant were run.
        fusion: BM25DenseRRF against LexicalHybridRRF, when both were run.
        cells: the cells used (held-out, then discovery).
        missing: cells of the layout without a result.
        adjusted_p: the Benjamini–Hochberg adjusted p-value of every held-out cell of the
            reported programs, the family being those cells (the discovery column is not
            part of it: it is where programs were chosen, not a test of transfer).
        latency: the programs' deployed latency measured beside the matrix
            (:mod:`embedding_ttc.analysis.latency`), or ``None``.

    """

    encoders: tuple[str, ...]
    tasks: tuple[str, ...]
    programs: tuple[str, ...]
    discovery_encoder: str | None
    discovery_tasks: tuple[str, ...]
    threshold: float
    lines: tuple[ProgramTransfer, ...]
    oracle: Oracle
    prf: PRFComparison | None
    fusion: FusionComparison | None
    cells: tuple[Cell, ...]
    missing: tuple[CellKey, ...]
    adjusted_p: Mapping[CellKey, float]
    latency: LatencyRecord | None = None

    @classmethod
    def from_cells(
        cls,
        cells: Iterable[Cell],
        *,
        encoders: Sequence[str],
        tasks: Sequence[str],
        programs: Sequence[str],
        discovery_encoder: str | None = None,
        discovery_tasks: Sequence[str] = (),
        oracle_programs: Sequence[str] | None = None,
        threshold: float = TIE_THRESHOLD,
        validation: Mapping[str, float] | None = None,
        latency: LatencyRecord | None = None,
    ) -> TransferReport:
        """Compute the report over the held-out (``encoders`` × ``tasks``) layout.

        Args:
            cells: any cells; those outside the layout are ignored.
            encoders: held-out encoders.
            tasks: held-out tasks.
            programs: programs to report (P0, if listed, gets no line).
            discovery_encoder: the encoder of the discovery column (``None``: no column).
            discovery_tasks: the tasks of the discovery column.
            oracle_programs: the oracle's program set (default: every reported program).
            threshold: the tie threshold.
            validation: discovered programs' validation mean Δ by name (see
                :func:`~embedding_ttc.analysis.discovered.validation_means`).
            latency: the deployed latency measured beside the matrix, carried to the tables.

        """
        index = {c.key: c for c in cells}
        progs = tuple(p for p in dict.fromkeys(programs) if p != BASELINE)
        held = CellBlock(index, tuple(encoders), tuple(tasks))
        disc = (
            CellBlock(index, (discovery_encoder,), tuple(discovery_tasks))
            if discovery_encoder is not None
            else None
        )
        family = [c for p in progs for c in held.of(p)]
        adjusted = dict(
            zip(
                (c.key for c in family),
                benjamini_hochberg([c.bootstrap.p_value for c in family]),
                strict=True,
            )
        )
        lines = tuple(
            replace(
                _program_line(p, held, disc, threshold, adjusted),
                validation_delta=(validation or {}).get(p),
            )
            for p in progs
        )
        oracle_set = tuple(oracle_programs) if oracle_programs is not None else progs
        rocchios = tuple(p for p in progs if parse_name(p)[0] == ROCCHIO)
        if DEFAULT_ROCCHIO in rocchios:  # the default's own grid point: count it once
            rocchios = tuple(p for p in rocchios if p != ROCCHIO)
        prf = None
        if SOFT_CENTROID in progs and rocchios:
            prf = compare_prf(held, rocchios, threshold)
        fusion = None
        if all(p in progs for p in FUSION_PAIR):
            fusion = compare_fusion(held, FUSION_PAIR, threshold)
        wanted_programs = (BASELINE, *progs) if BASELINE in programs else progs
        expected = [CellKey(e, t, p) for e in encoders for t in tasks for p in wanted_programs]
        if discovery_encoder is not None:
            expected += [
                CellKey(discovery_encoder, t, p) for t in discovery_tasks for p in wanted_programs
            ]
        expected = list(dict.fromkeys(expected))
        return cls(
            encoders=tuple(encoders),
            tasks=tuple(tasks),
            programs=progs,
            discovery_encoder=discovery_encoder,
            discovery_tasks=tuple(discovery_tasks),
            threshold=threshold,
            lines=lines,
            oracle=compute_oracle(held, oracle_set, threshold),
            prf=prf,
            fusion=fusion,
            cells=tuple(index[k] for k in expected if k in index),
            missing=tuple(k for k in expected if k not in index),
            adjusted_p=adjusted,
            latency=latency,
        )

    def line(self, program: str) -> ProgramTransfer:
        """The summary of ``program``."""
        for ln in self.lines:
            if ln.program == program:
                return ln
        raise KeyError(program)

    @property
    def shortlists(self) -> dict[str, int]:
        """Tasks whose cells reranked a dense shortlist, with its length (per cells present)."""
        return {c.task: c.shortlist for c in self.cells if c.shortlist is not None}

    @property
    def query_samples(self) -> dict[str, int]:
        """Tasks whose cells were scored on a sample of their queries, with its size."""
        return {c.task: c.query_sample for c in self.cells if c.query_sample is not None}


def _program_line(
    program: str,
    held: CellBlock,
    disc: CellBlock | None,
    threshold: float,
    adjusted_p: Mapping[CellKey, float],
) -> ProgramTransfer:
    pooled = held.of(program)
    deltas = [c.delta for c in pooled]
    base_queries = sum(c.n_queries for c in pooled)
    base = sum(c.base_calls for c in pooled)
    spent = sum(c.base_calls + c.program_calls for c in pooled)
    found = disc.of(program) if disc else []
    disc_base = sum(c.base_calls for c in found)
    disc_spent = sum(c.base_calls + c.program_calls for c in found)
    positive, negative = [], []
    for task in held.tasks:
        per_enc = [held.get(e, task, program) for e in held.encoders]
        if not per_enc or any(c is None for c in per_enc):
            continue  # unanimity needs every encoder's cell
        values = [c.delta for c in per_enc if c is not None]
        if all(v > threshold for v in values):
            positive.append(task)
        elif all(v < -threshold for v in values):
            negative.append(task)
    return ProgramTransfer(
        program=program,
        cost_ratio=spent / base if base else float("nan"),
        discovery=(WTL.count((c.delta for c in disc.of(program)), threshold) if disc else None),
        heldout={
            e: WTL.count((c.delta for c in held.of(program, e)), threshold) for e in held.encoders
        },
        n_cells=len(pooled),
        median_delta=median_or_nan(deltas),
        mean_delta=mean_or_nan(deltas),
        win_rate=win_rate(deltas, threshold),
        unanimous_positive=tuple(positive),
        unanimous_negative=tuple(negative),
        significant_wins={
            e: sum(c.bootstrap.significant_win for c in held.of(program, e)) for e in held.encoders
        },
        significant_losses={
            e: sum(c.bootstrap.significant_loss for c in held.of(program, e)) for e in held.encoders
        },
        corrected_wins={
            e: sum(
                c.bootstrap.significant_win and adjusted_p[c.key] <= ALPHA
                for c in held.of(program, e)
            )
            for e in held.encoders
        },
        corrected_losses={
            e: sum(
                c.bootstrap.significant_loss and adjusted_p[c.key] <= ALPHA
                for c in held.of(program, e)
            )
            for e in held.encoders
        },
        query_time_cost_ratio=(
            sum(c.query_calls for c in pooled) / base_queries if base_queries else float("nan")
        ),
        worst_query=min((min(c.differences(), default=0.0) for c in pooled), default=float("nan")),
        versus_reference=(
            None if program == REFERENCE else head_to_head(program, REFERENCE, held, threshold)
        ),
        queries=sum(len(c.differences()) for c in pooled),
        deep_losses=count_deep_losses(d for c in pooled for d in c.differences()),
        discovery_cost_ratio=disc_spent / disc_base if disc_base else float("nan"),
        discovery_mean_delta=mean_or_nan([c.delta for c in found]),
        discovery_mean_ndcg=mean_or_nan([c.comparison.ndcg_at_10 for c in found]),
    )
