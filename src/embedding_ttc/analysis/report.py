"""The transfer report: one self-contained HTML page over a matrix directory, with its tables.

``embedding-ttc report DIR [--search-run RUN]`` reads everything the transfer study left in
``DIR`` and writes::

    DIR/tables/<section>.{md,csv,tex}, DIR/tables/report.md    the transfer tables
    DIR/figures/<name>.{png,svg}                                every figure that has data
    DIR/report.html                                             one page, opens offline

Inputs, all read-only:

* ``DIR/cells/**.json`` — every cell found (:class:`~embedding_ttc.analysis.cells.Cell`);
* ``DIR/transfer.json`` — the manifest of the last ``transfer`` run: the layout (encoders,
  held-out and discovery tasks, programs), the bootstrap settings and the search run. The
  manifest is rewritten by every run, so the layout is the manifest's *extended by the cells
  found*: encoders and programs with held-out cells, and tasks of the manifest's held-out suite
  that have cells. Without a manifest, the layout is the cells' own and there is no discovery
  column;
* the search run (``--search-run`` or the manifest's ``search_run``): ``ledger.jsonl`` and
  ``search.json``, for the Pareto and trajectory figures;
* ``DIR/heads/<encoder>.json`` — learned-head records, for the training-time panel;
* ``DIR/runs.jsonl`` — one record per ``transfer`` run (:mod:`~embedding_ttc.analysis.run_log`):
  the study's wall time and the commands that made it.

The page embeds each figure as a base64 PNG and every table as HTML; it links to nothing. A
figure without data is replaced by a line saying why.
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from embedding_ttc import __version__
from embedding_ttc.analysis.cells import BASELINE, Cell, CellKey
from embedding_ttc.analysis.figure_data import (
    DEFAULT_PRF_TASK,
    FigureData,
    FigureInputs,
    Skipped,
    build_figures,
)
from embedding_ttc.analysis.grid import Grid
from embedding_ttc.analysis.heads import HEADS_DIR, HeadRecord
from embedding_ttc.analysis.run_log import (
    RUN_LOG,
    TransferRun,
    format_duration,
    read_runs,
    summed_run_seconds,
    total_wall_seconds,
)
from embedding_ttc.analysis.tables import sections, write_tables
from embedding_ttc.analysis.transfer_report import TransferReport, default_oracle
from embedding_ttc.durable import write_atomic
from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.search.ledger import LEDGER_FILE
from embedding_ttc.search.records import LedgerRecord

MANIFEST = "transfer.json"
REPORT_HTML = "report.html"


class ReportError(EmbeddingTTCError):
    """An input of the report is missing or malformed (the message names the file)."""


# --- reading ----------------------------------------------------------------------------------


def read_manifest(out: Path) -> dict[str, Any] | None:
    """``out/transfer.json``, or ``None`` when the matrix has none."""
    path = out / MANIFEST
    if not path.is_file():
        return None
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ReportError(f"{path} is not JSON: {exc}") from None
    if not isinstance(loaded, dict) or loaded.get("kind") != "transfer_manifest":
        raise ReportError(f"{path} is not a transfer manifest (kind 'transfer_manifest')")
    return loaded


def scan_cells(out: Path) -> list[Cell]:
    """Every cell under ``out/cells``, in path order."""
    cells = []
    for path in sorted((out / "cells").glob("*/*/*.json")):
        try:
            cells.append(Cell.model_validate_json(path.read_text(encoding="utf-8")))
        except ValidationError as exc:
            raise ReportError(f"{path} is not a valid transfer cell: {exc}") from None
    return cells


@dataclass(frozen=True)
class SearchRun:
    """A search run directory read without touching it."""

    path: Path
    records: tuple[LedgerRecord, ...]
    config: dict[str, Any]

    def label(self) -> str:
        """What the search ran on, for titles."""
        c = self.config
        tasks = c.get("tasks")
        n = f" ({len(tasks)} tasks)" if isinstance(tasks, list) else ""
        proposer = c.get("proposer") or "?"
        model = f" / {c['model']}" if c.get("model") else ""
        return f"{c.get('encoder', '?')} on the {c.get('suite', '?')} suite{n}, {proposer}{model}"


def load_search_run(run: Path) -> SearchRun:
    """Read ``run/ledger.jsonl`` (and ``search.json``) without writing anything.

    A final line cut short by a kill is ignored, as :class:`~embedding_ttc.search.ledger.
    Ledger` would; any other malformed line is an error naming the file and line.

    Raises:
        ReportError: when the ledger is missing or malformed.

    """
    path = run / LEDGER_FILE
    if not path.is_file():
        raise ReportError(
            f"{path} does not exist: --search-run must name a search run directory "
            "(the folder of ledger.jsonl, search.json and programs/)"
        )
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    if text and not text.endswith("\n"):
        lines = lines[:-1]  # an append cut short by a kill
    records = []
    for number, line in enumerate(lines, start=1):
        try:
            records.append(LedgerRecord.model_validate_json(line))
        except ValidationError as exc:
            raise ReportError(f"{path}:{number}: not a ledger record: {exc}") from None
    config: dict[str, Any] = {}
    config_path = run / "search.json"
    if config_path.is_file():
        try:
            loaded = json.loads(config_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ReportError(f"{config_path} is not JSON: {exc}") from None
        config = loaded if isinstance(loaded, dict) else {}
    return SearchRun(run, tuple(records), config)


def load_heads(out: Path) -> tuple[tuple[HeadRecord, ...], str]:
    """The learned-head records under ``out/heads``, and a note on what is missing or unread."""
    folder = out / HEADS_DIR
    paths = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not paths:
        return (), f"no learned-head records ({folder}/<encoder>.json absent)"
    records, problems = [], []
    for path in paths:
        try:
            records.append(HeadRecord.model_validate_json(path.read_text(encoding="utf-8")))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            problems.append(f"{path.name} is not a head_training record ({where}: {first['msg']})")
    return tuple(records), "; ".join(problems)


# --- the layout ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    """The matrix the report covers, and how it was found."""

    encoders: tuple[str, ...]
    tasks: tuple[str, ...]
    programs: tuple[str, ...]
    discovery_encoder: str | None
    discovery_tasks: tuple[str, ...]
    notes: tuple[str, ...]


def _suite(name: object) -> list[str]:
    from embedding_ttc.tasks.catalog import suite_tasks

    if not isinstance(name, str):
        return []
    try:
        return suite_tasks(name)
    except EmbeddingTTCError:
        return []


def _extend(base: Sequence[str], found: Sequence[str]) -> tuple[list[str], list[str]]:
    out = list(dict.fromkeys(base))
    extra = [x for x in dict.fromkeys(found) if x not in out]
    return out + extra, extra


def resolve_layout(manifest: dict[str, Any] | None, cells: Sequence[Cell]) -> Layout:
    """The manifest's layout extended by the cells found (see the module docstring)."""
    notes: list[str] = []
    if manifest is None:
        disc_suite = set(_suite("discovery"))
        held = [c for c in cells if c.task not in disc_suite]
        programs = sorted({c.program for c in held}, key=lambda p: (p != BASELINE, p))
        notes.append(f"no {MANIFEST}: the layout is that of the cells found")
        return Layout(
            encoders=tuple(sorted({c.encoder for c in held})),
            tasks=tuple(sorted({c.task for c in held})),
            programs=tuple(programs),
            discovery_encoder=None,
            discovery_tasks=(),
            notes=tuple(notes),
        )
    disc_tasks = [str(t) for t in manifest.get("discovery_tasks", [])]
    m_tasks = [str(t) for t in manifest.get("tasks", [])]
    m_encoders = [str(e) for e in manifest.get("encoders", [])]
    suite = _suite(manifest.get("suite"))
    held_tasks = {*m_tasks, *suite} - set(disc_tasks)
    held = [c for c in cells if c.task in held_tasks]
    tasks, extra_tasks = _extend(m_tasks, [t for t in suite if any(c.task == t for c in held)])
    # a piece's --task order would otherwise lead: the suite's own order, then other tasks
    tasks.sort(key=lambda t: suite.index(t) if t in suite else len(suite))
    encoders, extra_enc = _extend(m_encoders, sorted({c.encoder for c in held}))
    found = sorted({c.program for c in cells if c.task in held_tasks or c.task in disc_tasks})
    programs, extra_prog = _extend([str(p) for p in manifest.get("programs", [])], found)
    for kind, extra in (("encoders", extra_enc), ("tasks", extra_tasks), ("programs", extra_prog)):
        if extra:
            notes.append(f"{kind} beyond {MANIFEST}, found among the cells: {', '.join(extra)}")
    named = manifest.get("discovery_encoder")
    disc_encoder = str(named) if named else (m_encoders[0] if m_encoders else None)
    if disc_encoder in encoders:  # the discovery encoder leads the held-out columns, as in Table 2
        encoders.remove(disc_encoder)
        encoders.insert(0, disc_encoder)
    return Layout(
        encoders=tuple(encoders),
        tasks=tuple(tasks),
        programs=tuple(programs),
        discovery_encoder=disc_encoder if disc_tasks else None,
        discovery_tasks=tuple(disc_tasks),
        notes=tuple(notes),
    )


# --- the page -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReportPage:
    """Everything the page shows, computed; :func:`write_report` renders and writes it."""

    out: Path
    layout: Layout
    report: TransferReport
    figures: dict[str, FigureData | Skipped]
    manifest: dict[str, Any] | None
    n_cells_found: int
    outside: tuple[CellKey, ...]
    search: SearchRun | None
    heads: tuple[HeadRecord, ...]
    notes: tuple[str, ...] = field(default=())
    runs: tuple[TransferRun, ...] = field(default=())


def _search_path(out: Path, manifest: dict[str, Any] | None, given: Path | None) -> Path | None:
    if given is not None:
        return given
    recorded = (manifest or {}).get("search_run")
    if not recorded:
        return None
    path = Path(str(recorded))
    return path if path.is_absolute() else (out / path).resolve()


def build_page(
    out: Path,
    *,
    search_run: Path | None = None,
    program: str | None = None,
    prf_task: str = DEFAULT_PRF_TASK,
    seed: int = 0,
) -> ReportPage:
    """Read the matrix in ``out`` and compute the report and every figure's data.

    Args:
        out: the matrix directory (``transfer --out``).
        search_run: the search run of the Pareto and trajectory figures (default: the one the
            manifest records).
        program: the program of the per-encoder bars (default LexicalHybridRRF when present).
        prf_task: the task of the Rocchio-against-SoftCentroid bars.
        seed: the seed of the trajectory's UMAP layout.

    Raises:
        ReportError: when there is no cell, or an input is malformed.

    """
    out = Path(out)
    cells = scan_cells(out)
    if not cells:
        raise ReportError(f"no cells under {out / 'cells'}: run `embedding-ttc transfer` first")
    manifest = read_manifest(out)
    layout = resolve_layout(manifest, cells)
    report = TransferReport.from_cells(
        cells,
        encoders=layout.encoders,
        tasks=layout.tasks,
        programs=layout.programs,
        discovery_encoder=layout.discovery_encoder,
        discovery_tasks=layout.discovery_tasks,
        oracle_programs=default_oracle(layout.programs),
    )
    used = {c.key for c in report.cells}
    outside = tuple(c.key for c in cells if c.key not in used)
    path = _search_path(out, manifest, search_run)
    try:
        search = load_search_run(path) if path is not None else None
    except ReportError as exc:
        if search_run is not None:
            raise
        raise ReportError(
            f"{exc} (the search run {out / MANIFEST} records; pass --search-run to use another)"
        ) from None
    heads, heads_note = load_heads(out)
    inputs = FigureInputs(
        report=report,
        cells=tuple(cells),
        ledger=search.records if search is not None else None,
        search_label=search.label() if search is not None else "",
        heads=heads,
        heads_note=heads_note,
        program=program,
        prf_task=prf_task,
        seed=seed,
    )
    notes = list(layout.notes)
    if heads_note and heads:
        notes.append(heads_note)
    return ReportPage(
        out=out,
        layout=layout,
        report=report,
        figures=build_figures(inputs),
        manifest=manifest,
        n_cells_found=len(cells),
        outside=outside,
        search=search,
        heads=heads,
        notes=tuple(notes),
        runs=tuple(read_runs(out)),
    )


# --- writing ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReportFiles:
    """What :func:`write_report` wrote."""

    html: Path
    tables: Path
    figures: tuple[Path, ...]
    drawn: tuple[str, ...]
    skipped: tuple[Skipped, ...]


def write_report(page: ReportPage) -> ReportFiles:
    """Write the tables, every figure with data (PNG and SVG) and ``report.html``."""
    from embedding_ttc.analysis.figures import FIGURES, render, save

    tables = page.out / "tables"
    write_tables(tables, page.report)
    folder = page.out / "figures"
    saved = {}
    for name, data in page.figures.items():
        if isinstance(data, Skipped):
            continue
        fig = render(name, data)
        saved[name] = save(fig, folder, name)
    blocks = []
    for name, data in page.figures.items():
        spec = FIGURES.get(name)
        if isinstance(data, Skipped):
            blocks.append(_skipped_html(spec.title, data))
        else:
            blocks.append(_figure_html(name, spec.title, spec.caption(data), saved[name].png_bytes))
    path = page.out / REPORT_HTML
    write_atomic(path, render_html(page, blocks))
    return ReportFiles(
        html=path,
        tables=tables,
        figures=tuple(p for s in saved.values() for p in (s.png, s.svg)),
        drawn=tuple(saved),
        skipped=tuple(d for d in page.figures.values() if isinstance(d, Skipped)),
    )


# --- HTML ---------------------------------------------------------------------------------------

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto;
       max-width: 1200px; padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.05em; margin-top: 1.6em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ddd; padding: 2px 6px; text-align: right; white-space: nowrap; }
th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }
table.facts td { text-align: left; white-space: normal; }
.scroll { overflow-x: auto; }
figure { margin: 1.5em 0; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 0.9em; color: #444; max-width: 60em; }
.skipped { background: #fff7e6; border-left: 4px solid #e69500; padding: 0.5em 1em; margin: 1em 0; }
.note { color: #555; font-size: 0.9em; }
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _figure_html(name: str, title: str, caption: str, png: bytes) -> str:
    data = base64.b64encode(png).decode("ascii")
    return (
        f'<figure id="fig-{_e(name)}" class="figure" data-figure="{_e(name)}">\n'
        f"<h3>{_e(title)}</h3>\n"
        f'<img alt="{_e(title)}" src="data:image/png;base64,{data}">\n'
        f'<figcaption>{_e(caption)} <span class="note">Files: figures/{_e(name)}.png, '
        f"figures/{_e(name)}.svg.</span></figcaption>\n</figure>"
    )


def _skipped_html(title: str, skipped: Skipped) -> str:
    return (
        f'<div class="skipped" id="fig-{_e(skipped.figure)}" data-figure="{_e(skipped.figure)}" '
        f'data-skipped="true"><strong>{_e(title)}</strong> — not drawn: {_e(skipped.reason)}</div>'
    )


def grid_html(grid: Grid) -> str:
    """A :class:`~embedding_ttc.analysis.grid.Grid` as an HTML table (Markdown's formats)."""
    head = "".join(f"<th>{_e(h)}</th>" for h in grid.header)
    rows = []
    for row in grid.rows:
        # Grid's own display rule (formats, nan and None as –), as in Markdown and LaTeX.
        shown = "".join(f"<td>{_e(grid.shown(i, v))}</td>" for i, v in enumerate(row))
        rows.append(f"<tr>{shown}</tr>")
    return (
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _bootstrap_text(page: ReportPage) -> str:
    m = page.manifest or {}
    found = sorted({(c.bootstrap.resamples, c.bootstrap.base_seed) for c in page.report.cells})
    in_cells = ", ".join(f"{b:,} resamples / seed {s}" for b, s in found) or "none"
    asked = (
        f"{int(m['bootstrap']):,} resamples, base seed {m.get('seed', '?')} per {MANIFEST}; "
        if "bootstrap" in m
        else ""
    )
    return (
        f"paired bootstrap over queries, 95% CI; {asked}cells report: {in_cells}; "
        f"win/tie/loss threshold ±{page.report.threshold:g}"
    )


def _facts(page: ReportPage) -> list[tuple[str, str]]:
    r, lay = page.report, page.layout
    expected = len(r.cells) + len(r.missing)
    disc = (
        f"{lay.discovery_encoder} on {len(lay.discovery_tasks)} tasks: "
        + ", ".join(lay.discovery_tasks)
        if lay.discovery_encoder
        else "none"
    )
    heads = ", ".join(f"{h.encoder} ({h.chosen})" for h in page.heads) or "none"
    search = str(page.search.path) if page.search is not None else "none"
    facts = [
        ("matrix", str(page.out)),
        ("held-out encoders", f"{len(r.encoders)}: " + ", ".join(r.encoders)),
        ("held-out tasks", f"{len(r.tasks)}: " + ", ".join(r.tasks)),
        ("discovery column", disc),
        ("programs", f"{len(r.programs)} (+ P0): " + ", ".join(r.programs)),
        (
            "cells",
            f"{len(r.cells)} of {expected} present, {len(r.missing)} missing; "
            f"{page.n_cells_found} found in the store, {len(page.outside)} outside the layout",
        ),
        ("bootstrap", _bootstrap_text(page)),
        ("search run", search),
        ("learned heads", heads),
        ("transfer runs", _runs_text(page.runs)),
        ("generated by", f"embedding-ttc {__version__}"),
    ]
    if page.manifest and page.manifest.get("command"):
        facts.append(("last transfer command", " ".join(map(str, page.manifest["command"]))))
    return facts


def _runs_text(runs: Sequence[TransferRun]) -> str:
    if not runs:
        return f"no {RUN_LOG} (a matrix made before runs were logged)"
    computed = sum(r.computed for r in runs)
    return (
        f"{len(runs)} in {RUN_LOG}, {computed:,} cells computed; wall time "
        f"{format_duration(total_wall_seconds(runs))} (the union of their spans; "
        f"{format_duration(summed_run_seconds(runs))} summed over runs)"
    )


def _runs_html(runs: Sequence[TransferRun]) -> str:
    if not runs:
        return ""
    items = "".join(
        f"<li>{_e(r.started_at)}, {_e(format_duration(r.wall_seconds))}, {_e(r.status)}, "
        f"{r.computed:,} computed / {r.failed:,} failed / {r.already:,} present of "
        f"{r.planned:,}: <code>{_e(' '.join(r.command))}</code></li>"
        for r in runs
    )
    return f"<details><summary>{len(runs)} transfer runs</summary><ol>{items}</ol></details>"


def _missing_html(page: ReportPage) -> str:
    parts = []
    if page.report.missing:
        items = "".join(f"<li>{_e(k)}</li>" for k in page.report.missing)
        parts.append(
            f"<details><summary>{len(page.report.missing)} missing cells</summary>"
            f"<ul>{items}</ul></details>"
        )
    if page.outside:
        items = "".join(f"<li>{_e(k)}</li>" for k in page.outside)
        parts.append(
            f"<details><summary>{len(page.outside)} cells outside the layout (not in the "
            f"tables)</summary><ul>{items}</ul></details>"
        )
    return "\n".join(parts)


def _heads_html(heads: Sequence[HeadRecord]) -> str:
    if not heads:
        return ""
    header = (
        "encoder",
        "family",
        "chosen",
        "parameters",
        "train s",
        "validation nDCG@10",
        "discovery nDCG@10",
    )
    rows = [
        (
            h.encoder,
            f.family,
            "yes" if f.family == h.chosen else "",
            f"{f.parameters:,}",
            f"{f.train_seconds:.1f}",
            f"{f.validation_ndcg_at_10:.4f}",
            "–" if f.discovery_ndcg_at_10 is None else f"{f.discovery_ndcg_at_10:.4f}",
        )
        for h in heads
        for f in h.families
    ]
    grid = Grid("Learned heads", header, tuple(rows), ("",) * len(header))
    return f"<h3>Learned heads (training-time baseline)</h3>\n{grid_html(grid)}"


def _search_html(search: SearchRun | None) -> str:
    if search is None:
        return ""
    from embedding_ttc.search.frontier import pareto

    header = ("program", "generation", "c", "mean Δ", "W/T/L", "novelty")
    rows = tuple(
        (
            r.program_id,
            r.generation,
            r.cost_ratio,
            r.mean_delta,
            f"{r.wins}/{r.ties}/{r.losses}",
            r.novelty,
        )
        for r in pareto(search.records)
    )
    grid = Grid(
        "Pareto-optimal programs of the search", header, rows, ("", "", "{:.2f}", "{:+.4f}", "", "")
    )
    return (
        f"<h3>{_e(grid.title)} ({len(search.records)} candidates in {_e(search.path)})</h3>\n"
        f"{grid_html(grid)}"
    )


def render_html(page: ReportPage, figure_blocks: Sequence[str]) -> str:
    """The whole page: header facts, figures (or why not), tables."""
    facts = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in _facts(page))
    notes = "".join(f'<p class="note">{_e(n)}</p>' for n in page.notes)
    tables = []
    for name, grid in sections(page.report).items():
        body = f'<h3 id="table-{_e(name)}">{_e(grid.title)}</h3>\n{grid_html(grid)}'
        if name == "cells":
            summary = f"{_e(grid.title)} ({len(grid.rows)} rows)"
            body = f"<details><summary>{summary}</summary>{body}</details>"
        tables.append(body)
    toc = "".join(
        f'<li><a href="#fig-{_e(name)}">{_e(name)}</a>'
        f"{' (not drawn)' if isinstance(d, Skipped) else ''}</li>"
        for name, d in page.figures.items()
    )
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            '<head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            "<title>embedding-ttc transfer report</title>",
            f"<style>{_CSS}</style></head>",
            "<body>",
            "<h1>embedding-ttc transfer report</h1>",
            f'<section id="summary"><table class="facts">{facts}</table>{notes}',
            _missing_html(page),
            _runs_html(page.runs),
            "</section>",
            f"<nav><h2>Figures</h2><ul>{toc}</ul></nav>",
            '<section id="figures">',
            *figure_blocks,
            "</section>",
            '<section id="tables"><h2>Tables</h2>',
            *tables,
            _heads_html(page.heads),
            _search_html(page.search),
            "</section>",
            "</body></html>",
            "",
        ]
    )
