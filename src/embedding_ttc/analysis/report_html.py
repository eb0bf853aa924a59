"""The report page's markup: one self-contained HTML page from a computed :class:`ReportPage`.

The page embeds each figure as a base64 PNG and every table as HTML; it links to nothing. A
figure without data is replaced by a line saying why. Nothing here reads a file or computes a
statistic: :mod:`embedding_ttc.analysis.report_page` has done both.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence

from embedding_ttc import __version__
from embedding_ttc.analysis.figure_data.base import Skipped
from embedding_ttc.analysis.heads import HeadRecord
from embedding_ttc.analysis.inputs import SearchRun
from embedding_ttc.analysis.manifest import MANIFEST
from embedding_ttc.analysis.report_page import ReportPage
from embedding_ttc.analysis.run_log import (
    RUN_LOG,
    TransferRun,
    format_duration,
    summed_run_seconds,
    total_wall_seconds,
)
from embedding_ttc.analysis.tables import sections
from embedding_ttc.evaluation.grid import Grid

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


def figure_html(name: str, title: str, caption: str, png: bytes) -> str:
    """One drawn figure: its title, the PNG inline and its caption."""
    data = base64.b64encode(png).decode("ascii")
    return (
        f'<figure id="fig-{_e(name)}" class="figure" data-figure="{_e(name)}">\n'
        f"<h3>{_e(title)}</h3>\n"
        f'<img alt="{_e(title)}" src="data:image/png;base64,{data}">\n'
        f'<figcaption>{_e(caption)} <span class="note">Files: figures/{_e(name)}.png, '
        f"figures/{_e(name)}.svg.</span></figcaption>\n</figure>"
    )


def skipped_html(title: str, skipped: Skipped) -> str:
    """A figure that could not be drawn: its title and why."""
    return (
        f'<div class="skipped" id="fig-{_e(skipped.figure)}" data-figure="{_e(skipped.figure)}" '
        f'data-skipped="true"><strong>{_e(title)}</strong> — not drawn: {_e(skipped.reason)}</div>'
    )


def grid_html(grid: Grid) -> str:
    """A :class:`~embedding_ttc.evaluation.grid.Grid` as an HTML table (Markdown's formats)."""
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
    m = page.manifest
    found = sorted({(c.bootstrap.resamples, c.bootstrap.base_seed) for c in page.report.cells})
    in_cells = ", ".join(f"{b:,} resamples / seed {s}" for b, s in found) or "none"
    asked = f"{m.bootstrap:,} resamples, base seed {m.seed} per {MANIFEST}; " if m else ""
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
    if page.manifest and page.manifest.command:
        facts.append(("last transfer command", " ".join(page.manifest.command)))
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
    from embedding_ttc.runs.frontier import pareto

    header = ("program", "generation", "c", "mean Δ", "W/T/L", "novelty")
    rows = tuple(
        (
            r.program_id,
            r.generation,
            r.cost_ratio,
            r.mean_delta,
            str(r.wtl),
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
