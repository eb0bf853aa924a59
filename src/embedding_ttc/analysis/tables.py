"""The transfer report: computed once from cells, rendered as Markdown, CSV and LaTeX.

:meth:`TransferReport.from_cells` is pure computation over
:class:`~embedding_ttc.analysis.cells.Cell` records; :meth:`TransferReport.sections` turns its
fields into :class:`Grid` tables, which only format. What is computed (every Δ is a cell's
ΔnDCG@10, the mean over its queries of program − P0; a win is Δ > 0.001, a loss Δ < −0.001,
as in the paper's Table 2):

* ``heldout`` — the paper's Table 2 layout: per program, the discovery W/T/L over the discovery
  tasks on the discovery encoder, and the held-out W/T/L over the held-out tasks per held-out
  encoder; ``c`` is the held-out cost ratio, Σ(T_base + T_prog) / Σ T_base over the program's
  held-out cells (§3.3 sums calls before dividing);
* ``programs`` — per program, pooled over every held-out (encoder, task) cell: the median Δ,
  the mean Δ and the win-rate (the paper's footnote to §4.2); the tasks whose Δ is a win on
  every held-out encoder (unanimously positive) or a loss on every one (unanimously negative);
* ``significance`` — per program and encoder, the held-out tasks whose paired-bootstrap 95%
  CI excludes 0 above (significant wins) and below (significant losses);
* ``oracle`` — per held-out cell, the best Δ over a given program set (the frontier), and per
  encoder how many cells it lifts (best Δ > 0.001) and its mean best Δ;
* ``prf`` — App. D: per held-out cell, the best Rocchio configuration (the oracle over the
  ``Rocchio`` variants in the matrix, as the paper picks the best of its grid per cell) against
  SoftCentroid; present when both are in the matrix;
* ``fusion`` — the vanilla BM25DenseRRF against LexicalHybridRRF on the same cells: win-rate
  and median per encoder and pooled (§4.4); present when both are in the matrix;
* ``deltas`` — every held-out Δ (the heat-map of Fig. 3), ``*`` marking a significant cell;
* ``cells`` — one row per cell present, full precision (for figures and further analysis).

Missing cells are left out of every count and listed in :attr:`TransferReport.missing`.
"""

from __future__ import annotations

import csv
import io
import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from embedding_ttc.analysis.cells import Cell, CellKey
from embedding_ttc.evaluation.records import TIE_THRESHOLD
from embedding_ttc.programs.catalog import parse_name
from embedding_ttc.programs.library.rocchio import ROCCHIO_BETA, ROCCHIO_K

BASELINE = "P0"
SOFT_CENTROID = "SoftCentroid"
ROCCHIO = "Rocchio"
DEFAULT_ROCCHIO = f"{ROCCHIO}:K={ROCCHIO_K},beta={ROCCHIO_BETA}"  # the grid point ROCCHIO is
FUSION_PAIR = ("BM25DenseRRF", "LexicalHybridRRF")


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
class WTL:
    """Wins, ties and losses of Δ values at ±threshold."""

    wins: int
    ties: int
    losses: int

    @classmethod
    def of(cls, deltas: Iterable[float], threshold: float = TIE_THRESHOLD) -> WTL:
        """Count ``deltas`` above ``threshold``, within ±``threshold`` and below it."""
        values = list(deltas)
        wins = sum(1 for d in values if d > threshold)
        losses = sum(1 for d in values if d < -threshold)
        return cls(wins, len(values) - wins - losses, losses)

    def __str__(self) -> str:
        return f"{self.wins}/{self.ties}/{self.losses}"


@dataclass(frozen=True)
class ProgramTransfer:
    """One program's transfer summary.

    Attributes:
        program: the program name.
        cost_ratio: Σ(T_base + T_prog) / Σ T_base over its held-out cells (nan without any).
        discovery: W/T/L over the discovery tasks on the discovery encoder (``None`` when
            there is no discovery column).
        heldout: per held-out encoder, W/T/L over the held-out tasks.
        n_cells: held-out cells pooled.
        median_delta: median Δ over the pooled held-out cells (nan without any).
        mean_delta: mean Δ over the same cells.
        win_rate: fraction of those cells with Δ > threshold.
        unanimous_positive: held-out tasks won on every held-out encoder.
        unanimous_negative: held-out tasks lost on every held-out encoder.
        significant_wins: per encoder, held-out tasks whose bootstrap CI lies above 0.
        significant_losses: per encoder, held-out tasks whose bootstrap CI lies below 0.

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

        """
        index = {c.key: c for c in cells}
        progs = tuple(p for p in dict.fromkeys(programs) if p != BASELINE)
        held = _Layout(index, tuple(encoders), tuple(tasks))
        disc = (
            _Layout(index, (discovery_encoder,), tuple(discovery_tasks))
            if discovery_encoder is not None
            else None
        )
        lines = tuple(_program_line(p, held, disc, threshold) for p in progs)
        oracle_set = tuple(oracle_programs) if oracle_programs is not None else progs
        rocchios = tuple(p for p in progs if parse_name(p)[0] == ROCCHIO)
        if DEFAULT_ROCCHIO in rocchios:  # the default's own grid point: count it once
            rocchios = tuple(p for p in rocchios if p != ROCCHIO)
        prf = _prf(held, rocchios, threshold) if SOFT_CENTROID in progs and rocchios else None
        fusion = (
            _fusion(held, FUSION_PAIR, threshold) if all(p in progs for p in FUSION_PAIR) else None
        )
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
            oracle=_oracle(held, oracle_set, threshold),
            prf=prf,
            fusion=fusion,
            cells=tuple(index[k] for k in expected if k in index),
            missing=tuple(k for k in expected if k not in index),
        )

    def line(self, program: str) -> ProgramTransfer:
        """The summary of ``program``."""
        for ln in self.lines:
            if ln.program == program:
                return ln
        raise KeyError(program)

    def sections(self) -> dict[str, Grid]:
        """Every table of the report, by file stem, in reading order."""
        out = {
            "heldout": _heldout_grid(self),
            "programs": _programs_grid(self),
            "significance": _significance_grid(self),
            "oracle": _oracle_grid(self),
        }
        if self.prf is not None:
            out["prf"] = _prf_grid(self.prf)
        if self.fusion is not None:
            out["fusion"] = _fusion_grid(self, self.fusion)
        out["deltas"] = _deltas_grid(self)
        out["cells"] = _cells_grid(self)
        return out

    @property
    def shortlists(self) -> dict[str, int]:
        """Tasks whose cells reranked a dense shortlist, with its length (per cells present)."""
        return {c.task: c.shortlist for c in self.cells if c.shortlist is not None}

    @property
    def query_samples(self) -> dict[str, int]:
        """Tasks whose cells were scored on a sample of their queries, with its size."""
        return {c.task: c.query_sample for c in self.cells if c.query_sample is not None}

    def heldout_markdown(self) -> str:
        """The Table-2 layout alone, as Markdown."""
        return _heldout_grid(self).to_markdown()

    def to_markdown(self) -> str:
        """Every section but the long ``cells`` list, with headings, as one Markdown text."""
        parts = []
        for name, grid in self.sections().items():
            if name != "cells":
                parts.append(f"## {grid.title}\n\n{grid.to_markdown()}")
        if self.shortlists:
            listed = ", ".join(f"{t} (top {k})" for t, k in sorted(self.shortlists.items()))
            parts.append(
                f"Shortlist mode: on {listed}, every program, P0 included, reranks each "
                "query's best dense first-stage candidates instead of the whole corpus.\n"
            )
        if self.query_samples:
            listed = ", ".join(f"{t} ({n})" for t, n in sorted(self.query_samples.items()))
            parts.append(
                f"Query sample: {listed} were scored on a seeded sample of their queries (the "
                "same queries for every encoder and program).\n"
            )
        if self.missing:
            listed = ", ".join(str(k) for k in self.missing[:20])
            more = f" and {len(self.missing) - 20} more" if len(self.missing) > 20 else ""
            parts.append(f"**{len(self.missing)} cells missing**: {listed}{more}\n")
        return "\n".join(parts)

    def to_csv(self) -> dict[str, str]:
        """Each section as CSV (numbers at full precision), by file stem."""
        return {name: grid.to_csv() for name, grid in self.sections().items()}

    def to_latex(self) -> dict[str, str]:
        """Each section as a booktabs tabular, by file stem."""
        return {name: grid.to_latex() for name, grid in self.sections().items()}


# --- computation --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Layout:
    """Cells of an encoders × tasks block, looked up by program."""

    index: dict[CellKey, Cell]
    encoders: tuple[str, ...]
    tasks: tuple[str, ...]

    def get(self, encoder: str, task: str, program: str) -> Cell | None:
        return self.index.get(CellKey(encoder, task, program))

    def of(self, program: str, encoder: str | None = None) -> list[Cell]:
        encs = self.encoders if encoder is None else (encoder,)
        found = (self.get(e, t, program) for e in encs for t in self.tasks)
        return [c for c in found if c is not None]


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")


def _mean(values: Sequence[float]) -> float:
    return float(statistics.fmean(values)) if values else float("nan")


def _win_rate(values: Sequence[float], threshold: float) -> float:
    return sum(1 for v in values if v > threshold) / len(values) if values else float("nan")


def _program_line(
    program: str, held: _Layout, disc: _Layout | None, threshold: float
) -> ProgramTransfer:
    pooled = held.of(program)
    deltas = [c.delta_ndcg_at_10 for c in pooled]
    base = sum(c.base_calls for c in pooled)
    spent = sum(c.base_calls + c.program_calls for c in pooled)
    positive, negative = [], []
    for task in held.tasks:
        per_enc = [held.get(e, task, program) for e in held.encoders]
        if not per_enc or any(c is None for c in per_enc):
            continue  # unanimity needs every encoder's cell
        values = [c.delta_ndcg_at_10 for c in per_enc if c is not None]
        if all(v > threshold for v in values):
            positive.append(task)
        elif all(v < -threshold for v in values):
            negative.append(task)
    return ProgramTransfer(
        program=program,
        cost_ratio=spent / base if base else float("nan"),
        discovery=(
            WTL.of((c.delta_ndcg_at_10 for c in disc.of(program)), threshold) if disc else None
        ),
        heldout={
            e: WTL.of((c.delta_ndcg_at_10 for c in held.of(program, e)), threshold)
            for e in held.encoders
        },
        n_cells=len(pooled),
        median_delta=_median(deltas),
        mean_delta=_mean(deltas),
        win_rate=_win_rate(deltas, threshold),
        unanimous_positive=tuple(positive),
        unanimous_negative=tuple(negative),
        significant_wins={
            e: sum(c.bootstrap.significant_win for c in held.of(program, e)) for e in held.encoders
        },
        significant_losses={
            e: sum(c.bootstrap.significant_loss for c in held.of(program, e)) for e in held.encoders
        },
    )


def _oracle(held: _Layout, programs: tuple[str, ...], threshold: float) -> Oracle:
    cells: list[OracleCell] = []
    per_encoder: list[OracleEncoder] = []
    for e in held.encoders:
        mine: list[OracleCell] = []
        for t in held.tasks:
            present = [c for c in (held.get(e, t, p) for p in programs) if c is not None]
            if present:
                # Highest Δ; a tie goes to the program listed first.
                best = max(present, key=lambda c: c.delta_ndcg_at_10)
                mine.append(OracleCell(e, t, best.program, best.delta_ndcg_at_10))
        cells += mine
        per_encoder.append(
            OracleEncoder(
                encoder=e,
                lifted=sum(1 for c in mine if c.delta > threshold),
                cells=len(mine),
                mean_best_delta=_mean([c.delta for c in mine]),
            )
        )
    return Oracle(programs, tuple(cells), tuple(per_encoder))


def _prf(held: _Layout, rocchios: tuple[str, ...], threshold: float) -> PRFComparison:
    cells: list[PRFCell] = []
    for e in held.encoders:
        for t in held.tasks:
            sc = held.get(e, t, SOFT_CENTROID)
            present = [c for c in (held.get(e, t, p) for p in rocchios) if c is not None]
            if sc is None or not present:
                continue
            best = max(present, key=lambda c: c.delta_ndcg_at_10)
            cells.append(
                PRFCell(
                    encoder=e,
                    task=t,
                    best_rocchio=best.program,
                    rocchio_delta=best.delta_ndcg_at_10,
                    soft_centroid_delta=sc.delta_ndcg_at_10,
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
                mean_rocchio_delta=_mean([c.rocchio_delta for c in mine]),
                mean_soft_centroid_delta=_mean([c.soft_centroid_delta for c in mine]),
                soft_centroid_ahead=sum(1 for c in mine if c.advantage > threshold),
            )
        )
    return PRFComparison(rocchios, tuple(cells), tuple(per_encoder))


def _fusion(held: _Layout, pair: tuple[str, ...], threshold: float) -> FusionComparison:
    lines = []
    for p in pair:
        per = {e: [c.delta_ndcg_at_10 for c in held.of(p, e)] for e in held.encoders}
        pooled = [d for ds in per.values() for d in ds]
        lines.append(
            FusionLine(
                program=p,
                win_rate={e: _win_rate(ds, threshold) for e, ds in per.items()},
                median_delta={e: _median(ds) for e, ds in per.items()},
                pooled_win_rate=_win_rate(pooled, threshold),
                pooled_median_delta=_median(pooled),
                n_cells=len(pooled),
            )
        )
    return FusionComparison(tuple(lines))


# --- rendering ----------------------------------------------------------------------------

Value = str | int | float | bool | None


@dataclass(frozen=True)
class Grid:
    """A titled table of typed values with a display format per column.

    ``formats[i]`` is a :meth:`str.format` spec applied to numbers of column ``i`` in Markdown
    and LaTeX (``""``: ``str``); CSV writes the raw values. ``None`` is shown as ``–`` and
    written empty.
    """

    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[Value, ...], ...]
    formats: tuple[str, ...]

    def shown(self, i: int, value: Value) -> str:
        """Column ``i``'s ``value`` as every rendering prints it ("–" for a missing cell)."""
        if value is None:
            return "–"
        if isinstance(value, float) and value != value:  # nan: no cell to aggregate
            return "–"
        if isinstance(value, bool) or not isinstance(value, int | float):
            return str(value)
        return self.formats[i].format(value) if self.formats[i] else str(value)

    def to_markdown(self) -> str:
        """A GitHub-flavoured Markdown table."""
        out = ["| " + " | ".join(self.header) + " |", "|" + "---|" * len(self.header)]
        for row in self.rows:
            out.append("| " + " | ".join(self.shown(i, v) for i, v in enumerate(row)) + " |")
        return "\n".join(out) + "\n"

    def to_csv(self) -> str:
        """CSV with the raw values."""
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(self.header)
        for row in self.rows:
            writer.writerow(["" if v is None else v for v in row])
        return buf.getvalue()

    def to_latex(self) -> str:
        """A booktabs tabular; the first column (names) is set in small caps."""
        spec = "@{}l" + "c" * (len(self.header) - 1) + "@{}"
        lines = [
            rf"\begin{{tabular}}{{{spec}}}",
            r"\toprule",
            " & ".join(rf"\textbf{{{_tex(h)}}}" for h in self.header) + r" \\",
            r"\midrule",
        ]
        for row in self.rows:
            shown = [self.shown(i, v) for i, v in enumerate(row)]
            first = rf"\textsc{{{_tex(shown[0])}}}" if shown else ""
            rest = [_tex_cell(s) for s in shown[1:]]
            lines.append(" & ".join([first, *rest]) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}", ""]
        return "\n".join(lines)


_NUMERIC = re.compile(r"^[+\-]?[0-9][0-9./,]*%?\*?$")


def _tex(text: str) -> str:
    for ch in "\\&%$#_{}":
        text = text.replace(ch, "\\" + ch)
    return text.replace("–", "--").replace("−", "-").replace("Δ", r"$\Delta$")


def _tex_cell(text: str) -> str:
    if _NUMERIC.match(text):
        star = text.endswith("*")
        body = _tex(text.rstrip("*"))
        return f"${body}{'^{*}' if star else ''}$"
    return _tex(text)


def _heldout_grid(r: TransferReport) -> Grid:
    disc = r.discovery_encoder is not None
    header = ["program", "c"]
    if disc:
        header.append(f"discovery {r.discovery_encoder} ({len(r.discovery_tasks)} tasks)")
    header += [f"{e} ({len(r.tasks)} tasks)" for e in r.encoders]
    rows = []
    for ln in r.lines:
        row: list[Value] = [ln.program, ln.cost_ratio]
        if disc:
            row.append(str(ln.discovery))
        row += [str(ln.heldout[e]) for e in r.encoders]
        rows.append(tuple(row))
    formats = ("", "{:.2f}", *[""] * (len(header) - 2))
    return Grid(
        f"Held-out transfer: W/T/L over tasks at ±{r.threshold:g}",
        tuple(header),
        tuple(rows),
        formats,
    )


def _programs_grid(r: TransferReport) -> Grid:
    header = (
        "program",
        "cells",
        "median Δ",
        "mean Δ",
        "win-rate",
        "unanimous +",
        "unanimous −",
        "tasks unanimously positive",
        "tasks unanimously negative",
    )
    rows = tuple(
        (
            ln.program,
            ln.n_cells,
            ln.median_delta,
            ln.mean_delta,
            ln.win_rate,
            len(ln.unanimous_positive),
            len(ln.unanimous_negative),
            " ".join(ln.unanimous_positive),
            " ".join(ln.unanimous_negative),
        )
        for ln in r.lines
    )
    formats = ("", "", "{:+.4f}", "{:+.4f}", "{:.0%}", "", "", "", "")
    title = (
        f"Pooled over held-out (encoder, task) cells: median and mean Δ, win-rate "
        f"(Δ > {r.threshold:g}); tasks won / lost on all {len(r.encoders)} encoders"
    )
    return Grid(title, header, rows, formats)


def _significance_grid(r: TransferReport) -> Grid:
    header = ("program", *(f"{e} sig. W/L" for e in r.encoders))
    rows = tuple(
        (
            ln.program,
            *(f"{ln.significant_wins[e]}/{ln.significant_losses[e]}" for e in r.encoders),
        )
        for ln in r.lines
    )
    resamples = {c.bootstrap.resamples for c in r.cells}
    b = f"{resamples.pop():,}" if len(resamples) == 1 else "mixed"
    title = (
        f"Significant wins / losses over held-out tasks (paired bootstrap over queries, "
        f"{b} resamples, 95% CI excludes 0)"
    )
    return Grid(title, header, rows, ("",) * len(header))


def _oracle_grid(r: TransferReport) -> Grid:
    o = r.oracle
    best = {(c.encoder, c.task): c for c in o.cells}
    header = ("encoder", "lifted", "mean best Δ", *r.tasks)
    rows: list[tuple[Value, ...]] = []
    for e in o.per_encoder:
        per_task: list[Value] = []
        for t in r.tasks:
            c = best.get((e.encoder, t))
            per_task.append(None if c is None else f"{c.delta:+.4f} {c.program}")
        rows.append((e.encoder, f"{e.lifted}/{e.cells}", e.mean_best_delta, *per_task))
    total = sum(e.cells for e in o.per_encoder)
    title = (
        f"Oracle over {len(o.programs)} programs: best Δ per held-out cell; "
        f"{o.lifted} of {total} cells lifted"
    )
    return Grid(title, header, tuple(rows), ("", "", "{:+.4f}", *[""] * len(r.tasks)))


def _prf_grid(prf: PRFComparison) -> Grid:
    header = (
        "encoder",
        "task",
        "best Rocchio",
        "Rocchio Δ",
        "SoftCentroid Δ",
        "SC advantage",
        "SC p",
    )
    rows: list[tuple[Value, ...]] = [
        (
            c.encoder,
            c.task,
            c.best_rocchio,
            c.rocchio_delta,
            c.soft_centroid_delta,
            c.advantage,
            c.soft_centroid_p_value,
        )
        for c in prf.cells
    ]
    rows += [
        (
            e.encoder,
            f"mean of {e.cells}",
            f"SC ahead on {e.soft_centroid_ahead}",
            e.mean_rocchio_delta,
            e.mean_soft_centroid_delta,
            e.mean_advantage,
            None,
        )
        for e in prf.per_encoder
    ]
    title = (
        f"SoftCentroid against the best of {len(prf.rocchio_programs)} Rocchio "
        "configuration(s), per held-out cell (App. D)"
    )
    return Grid(title, header, tuple(rows), ("", "", "", "{:+.4f}", "{:+.4f}", "{:+.4f}", "{:.4f}"))


def _fusion_grid(r: TransferReport, fusion: FusionComparison) -> Grid:
    header = (
        "program",
        "cells",
        "pooled win-rate",
        "pooled median Δ",
        *(f"{e} win-rate" for e in r.encoders),
        *(f"{e} median Δ" for e in r.encoders),
    )
    rows: tuple[tuple[Value, ...], ...] = tuple(
        (
            ln.program,
            ln.n_cells,
            ln.pooled_win_rate,
            ln.pooled_median_delta,
            *(ln.win_rate[e] for e in r.encoders),
            *(ln.median_delta[e] for e in r.encoders),
        )
        for ln in fusion.lines
    )
    n = len(r.encoders)
    formats = ("", "", "{:.0%}", "{:+.4f}", *["{:.0%}"] * n, *["{:+.4f}"] * n)
    return Grid("Plain BM25 + dense RRF against LexicalHybridRRF", header, rows, formats)


def _deltas_grid(r: TransferReport) -> Grid:
    index = {c.key: c for c in r.cells}
    rows: list[tuple[Value, ...]] = []
    for e in r.encoders:
        for p in r.programs:
            shown: list[Value] = []
            for t in r.tasks:
                c = index.get(CellKey(e, t, p))
                if c is None:
                    shown.append(None)
                    continue
                sig = c.bootstrap.significant_win or c.bootstrap.significant_loss
                shown.append(f"{c.delta_ndcg_at_10:+.4f}{'*' if sig else ''}")
            rows.append((e, p, *shown))
    return Grid(
        "ΔnDCG@10 per held-out cell (* : bootstrap 95% CI excludes 0)",
        ("encoder", "program", *r.tasks),
        tuple(rows),
        ("",) * (2 + len(r.tasks)),
    )


def _cells_grid(r: TransferReport) -> Grid:
    held = set(r.encoders), set(r.tasks)
    header = (
        "split",
        "encoder",
        "task",
        "program",
        "shortlist",
        "query_sample",
        "n_queries",
        "ndcg_at_10",
        "baseline_ndcg_at_10",
        "delta_ndcg_at_10",
        "wins",
        "ties",
        "losses",
        "ci_low",
        "ci_high",
        "p_value",
        "significant_win",
        "significant_loss",
        "cost_ratio",
        "index_calls",
        "query_calls",
        "encode_seconds",
        "algebra_seconds",
    )
    rows = tuple(
        (
            "heldout" if c.encoder in held[0] and c.task in held[1] else "discovery",
            c.encoder,
            c.task,
            c.program,
            c.shortlist,
            c.query_sample,
            c.n_queries,
            c.ndcg_at_10,
            c.baseline_ndcg_at_10,
            c.delta_ndcg_at_10,
            c.wins,
            c.ties,
            c.losses,
            c.bootstrap.ci_low,
            c.bootstrap.ci_high,
            c.bootstrap.p_value,
            c.bootstrap.significant_win,
            c.bootstrap.significant_loss,
            c.cost_ratio,
            c.index_calls,
            c.query_calls,
            c.encode_seconds,
            c.algebra_seconds,
        )
        for c in r.cells
    )
    formats = (
        "",
        "",
        "",
        "",
        "",
        "",
        "",
        "{:.4f}",
        "{:.4f}",
        "{:+.4f}",
        "",
        "",
        "",
        "{:+.4f}",
        "{:+.4f}",
        "{:.4f}",
        "",
        "",
        "{:.2f}",
        "",
        "",
        "{:.1f}",
        "{:.2f}",
    )
    return Grid("Every cell", header, rows, formats)
