"""The transfer tables: a :class:`~embedding_ttc.analysis.transfer_report.TransferReport` as grids.

Each section is a :class:`~embedding_ttc.evaluation.grid.Grid`, written by :func:`write_tables`
as ``<section>.md``, ``.csv`` and ``.tex``, with every section but ``cells`` in one
``report.md``:

* ``deploy`` — the headline beside each program's served latency per ``/v1/rerank`` request
  (:mod:`~embedding_ttc.analysis.deploy_table`); present with a latency record
  (``DIR/latency.json``);
* ``heldout`` — the paper's Table 2 layout: per program, the discovery W/T/L on the discovery
  encoder and the held-out W/T/L per held-out encoder, with the held-out cost ratio ``c``;
* ``discovery`` — the discovery column in full (present with one): per program its cost ratio
  ``c`` and mean Δ over the discovery suite on the discovery encoder, W/T/L, mean nDCG@10 and
  the Δ of every discovery task;
* ``programs`` — per program, pooled over the held-out cells: the query-time cost ratio,
  median and mean Δ, the worst query, win-rate, the cells won head to head against
  BM25DenseRRF, the tasks unanimously positive or negative across encoders;
* ``significance`` — per program and encoder, the significant wins and losses;
* ``oracle`` — per held-out cell, the oracle's best Δ and program, and per encoder the cells
  lifted;
* ``prf`` — App. D: the best Rocchio configuration against SoftCentroid per held-out cell;
  present when both are in the matrix;
* ``fusion`` — BM25DenseRRF against LexicalHybridRRF (§4.4); present when both are;
* ``deltas`` — every held-out Δ (the heat-map of Fig. 3), ``*`` marking a significant cell;
* ``reference`` — every held-out cell head to head against the reference program
  (BM25DenseRRF): the program's nDCG@10 minus the reference's; present when the reference
  was run;
* ``cells`` — one row per cell present, full precision (for figures and further analysis).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from embedding_ttc.analysis.cells import CellKey
from embedding_ttc.analysis.comparisons import FusionComparison, PRFComparison
from embedding_ttc.analysis.deploy_table import deploy_grid
from embedding_ttc.analysis.headline import headline_grid
from embedding_ttc.analysis.transfer_report import TransferReport
from embedding_ttc.durable import write_atomic
from embedding_ttc.evaluation.comparison import DEEP_LOSS, Comparison
from embedding_ttc.evaluation.grid import Grid, Value
from embedding_ttc.programs.catalog import REFERENCE_PROGRAM as REFERENCE


def sections(report: TransferReport) -> dict[str, Grid]:
    """Every table of the report, by file stem, in reading order."""
    out = {
        "heldout": _heldout_grid(report),
    }
    headline = headline_grid(report)
    if headline is not None:
        out = {"headline": headline, **out}
    deploy = deploy_grid(headline, report.latency)
    if deploy is not None:
        out = {"deploy": deploy, **out}
    if report.discovery_encoder is not None:
        out["discovery"] = _discovery_grid(report)
    out |= {
        "programs": _programs_grid(report),
        "significance": _significance_grid(report),
        "oracle": _oracle_grid(report),
    }
    if report.prf is not None:
        out["prf"] = _prf_grid(report.prf)
    if report.fusion is not None:
        out["fusion"] = _fusion_grid(report, report.fusion)
    out["deltas"] = _deltas_grid(report)
    versus_reference = _reference_grid(report)
    if versus_reference is not None:
        out["reference"] = versus_reference
    out["cells"] = _cells_grid(report)
    return out


def heldout_markdown(report: TransferReport) -> str:
    """The Table-2 layout alone, as Markdown."""
    return _heldout_grid(report).to_markdown()


def to_markdown(report: TransferReport) -> str:
    """Every section but the long ``cells`` list, with headings, as one Markdown text."""
    parts = []
    for name, grid in sections(report).items():
        if name != "cells":
            parts.append(f"## {grid.title}\n\n{grid.to_markdown()}")
    if report.shortlists:
        listed = ", ".join(f"{t} (top {k})" for t, k in sorted(report.shortlists.items()))
        parts.append(
            f"Shortlist mode: on {listed}, every program, P0 included, reranks each "
            "query's best dense first-stage candidates instead of the whole corpus.\n"
        )
    if report.query_samples:
        listed = ", ".join(f"{t} ({n})" for t, n in sorted(report.query_samples.items()))
        parts.append(
            f"Query sample: {listed} were scored on a seeded sample of their queries (the "
            "same queries for every encoder and program).\n"
        )
    if report.missing:
        listed = ", ".join(str(k) for k in report.missing[:20])
        more = f" and {len(report.missing) - 20} more" if len(report.missing) > 20 else ""
        parts.append(f"**{len(report.missing)} cells missing**: {listed}{more}\n")
    return "\n".join(parts)


def to_csv(report: TransferReport) -> dict[str, str]:
    """Each section as CSV (numbers at full precision), by file stem."""
    return {name: grid.to_csv() for name, grid in sections(report).items()}


def to_latex(report: TransferReport) -> dict[str, str]:
    """Each section as a booktabs tabular, by file stem."""
    return {name: grid.to_latex() for name, grid in sections(report).items()}


def _heldout_grid(r: TransferReport) -> Grid:
    disc = r.discovery_encoder is not None
    header = ["program", "c (held-out)"]
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


def _discovery_grid(r: TransferReport) -> Grid:
    index = {c.key: c for c in r.cells}
    enc = r.discovery_encoder
    rows = []
    for ln in r.lines:
        shown: list[Value] = []
        for t in r.discovery_tasks:
            c = index.get(CellKey(enc, t, ln.program)) if enc is not None else None
            shown.append(None if c is None else c.delta)
        rows.append(
            (
                ln.program,
                ln.discovery_cost_ratio,
                ln.discovery_mean_delta,
                None if ln.discovery is None else str(ln.discovery),
                ln.discovery_mean_ndcg,
                *shown,
            )
        )
    header = ("program", "c (discovery)", "mean Δ", "W/T/L", "mean nDCG@10", *r.discovery_tasks)
    formats = ("", "{:.2f}", "{:+.4f}", "", "{:.4f}", *["{:+.4f}"] * len(r.discovery_tasks))
    return Grid(
        f"Discovery suite on {enc}: cost ratio, mean ΔnDCG@10, W/T/L over tasks at "
        f"±{r.threshold:g}, mean nDCG@10 and the Δ of every task",
        header,
        tuple(rows),
        formats,
    )


def _programs_grid(r: TransferReport) -> Grid:
    header = (
        "program",
        "cells",
        "c_q",
        "validation Δ",
        "median Δ",
        "mean Δ",
        "worst query",
        f"queries < −{DEEP_LOSS:g}",
        "win-rate",
        "vs BM25DenseRRF W/T/L",
        "sig. W/L (BH)",
        "unanimous +",
        "unanimous −",
        "tasks unanimously positive",
        "tasks unanimously negative",
    )
    rows = tuple(
        (
            ln.program,
            ln.n_cells,
            ln.query_time_cost_ratio,
            ln.validation_delta,
            ln.median_delta,
            ln.mean_delta,
            ln.worst_query,
            f"{ln.deep_losses} of {ln.queries}",
            ln.win_rate,
            None if ln.versus_reference is None else str(ln.versus_reference),
            f"{sum(ln.corrected_wins.values())}/{sum(ln.corrected_losses.values())}",
            len(ln.unanimous_positive),
            len(ln.unanimous_negative),
            " ".join(ln.unanimous_positive),
            " ".join(ln.unanimous_negative),
        )
        for ln in r.lines
    )
    formats = (
        *("", "", "{:.2f}", "{:+.4f}", "{:+.4f}", "{:+.4f}", "{:+.3f}", "", "{:.0%}"),
        *("", "", "", "", "", ""),
    )
    title = (
        f"Pooled over held-out (encoder, task) cells: query-time cost ratio, a discovered "
        f"program's mean Δ on the discovery validation queries, median and mean Δ, the worst "
        f"query's Δ and the queries below −{DEEP_LOSS:g}, win-rate (Δ > {r.threshold:g}), "
        f"cells won / tied / lost head to head against BM25DenseRRF, cells significantly won / "
        f"lost after the Benjamini–Hochberg correction; tasks won / lost on all "
        f"{len(r.encoders)} encoders"
    )
    return Grid(title, header, rows, formats)


def _significance_grid(r: TransferReport) -> Grid:
    header = (
        "program",
        *(f"{e} sig. W/L" for e in r.encoders),
        "all sig. W/L",
        "all sig. W/L (BH)",
    )
    rows = tuple(
        (
            ln.program,
            *(f"{ln.significant_wins[e]}/{ln.significant_losses[e]}" for e in r.encoders),
            f"{sum(ln.significant_wins.values())}/{sum(ln.significant_losses.values())}",
            f"{sum(ln.corrected_wins.values())}/{sum(ln.corrected_losses.values())}",
        )
        for ln in r.lines
    )
    resamples = {c.bootstrap.resamples for c in r.cells}
    b = f"{resamples.pop():,}" if len(resamples) == 1 else "mixed"
    title = (
        f"Significant wins / losses over held-out tasks (paired bootstrap over queries, "
        f"{b} resamples, 95% CI excludes 0); BH: still significant after the "
        f"Benjamini-Hochberg correction over the table's {len(r.adjusted_p)} held-out cells"
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
                shown.append(f"{c.delta:+.4f}{'*' if sig else ''}")
            rows.append((e, p, *shown))
    return Grid(
        "ΔnDCG@10 per held-out cell (* : bootstrap 95% CI excludes 0)",
        ("encoder", "program", *r.tasks),
        tuple(rows),
        ("",) * (2 + len(r.tasks)),
    )


def _reference_grid(r: TransferReport) -> Grid | None:
    index = {c.key: c for c in r.cells}
    if not any(CellKey(e, t, REFERENCE) in index for e in r.encoders for t in r.tasks):
        return None
    rows: list[tuple[Value, ...]] = []
    for e in r.encoders:
        for p in r.programs:
            if p == REFERENCE:
                continue
            shown: list[Value] = []
            for t in r.tasks:
                cell, reference = index.get(CellKey(e, t, p)), index.get(CellKey(e, t, REFERENCE))
                if cell is None or reference is None:
                    shown.append(None)
                else:
                    shown.append(cell.comparison.ndcg_at_10 - reference.comparison.ndcg_at_10)
            rows.append((e, p, *shown))
    return Grid(
        f"nDCG@10 against {REFERENCE} per held-out cell (program minus {REFERENCE})",
        ("encoder", "program", *r.tasks),
        tuple(rows),
        ("", "", *["{:+.4f}"] * len(r.tasks)),
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
        "p_value_bh",
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
            c.comparison.ndcg_at_10,
            c.comparison.baseline_ndcg_at_10,
            c.delta,
            *_counts(c.comparison),
            c.bootstrap.ci_low,
            c.bootstrap.ci_high,
            c.bootstrap.p_value,
            r.adjusted_p.get(c.key),
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


def _counts(comparison: Comparison) -> tuple[Value, Value, Value]:
    """Wins, ties and losses (blank when a comparison has none; a cell's always has)."""
    wtl = comparison.wtl
    return (None, None, None) if wtl is None else (wtl.wins, wtl.ties, wtl.losses)


def write_grids(folder: Path, grids: Mapping[str, Grid]) -> None:
    """Each grid as ``<name>.md``, ``.csv`` and ``.tex`` in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, grid in grids.items():
        write_atomic(folder / f"{name}.md", f"## {grid.title}\n\n{grid.to_markdown()}")
        write_atomic(folder / f"{name}.csv", grid.to_csv())
        write_atomic(folder / f"{name}.tex", grid.to_latex())


def write_tables(folder: Path, report: TransferReport) -> None:
    """Each section as ``<name>.md``, ``.csv`` and ``.tex``, and ``report.md``."""
    write_grids(folder, sections(report))
    write_atomic(folder / "report.md", to_markdown(report))
