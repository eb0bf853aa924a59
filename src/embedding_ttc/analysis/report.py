"""The transfer report: one self-contained HTML page over a matrix directory, with its tables.

``embedding-ttc report DIR [--search-run RUN]`` reads everything the transfer study left in
``DIR`` and writes::

    DIR/tables/<section>.{md,csv,tex}, DIR/tables/report.md    the transfer tables
    DIR/figures/<name>.{png,svg}                                every figure that has data
    DIR/report.html                                             one page, opens offline

The inputs are read, without writing, by :mod:`~embedding_ttc.analysis.inputs` (the cells, the
manifest ``DIR/transfer.json``, the search run of ``--search-run`` or of the manifest, the
learned-head records) and :mod:`~embedding_ttc.analysis.run_log` (``DIR/runs.jsonl``: the
study's wall time and the commands that made it).
:func:`~embedding_ttc.analysis.report_page.build_page` computes the page; :func:`write_report`
renders it (:mod:`~embedding_ttc.analysis.tables`, :mod:`~embedding_ttc.analysis.figures`,
:mod:`~embedding_ttc.analysis.report_html`) and writes the files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from embedding_ttc.analysis.figure_data.base import Skipped
from embedding_ttc.analysis.report_html import figure_html, render_html, skipped_html
from embedding_ttc.analysis.report_page import ReportPage
from embedding_ttc.analysis.tables import write_tables
from embedding_ttc.durable import write_atomic

REPORT_HTML = "report.html"


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
    from embedding_ttc.analysis.figures.registry import FIGURES, render, save

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
            blocks.append(skipped_html(spec.title, data))
        else:
            blocks.append(figure_html(name, spec.title, spec.caption(data), saved[name].png_bytes))
    path = page.out / REPORT_HTML
    write_atomic(path, render_html(page, blocks))
    return ReportFiles(
        html=path,
        tables=tables,
        figures=tuple(p for s in saved.values() for p in (s.png, s.svg)),
        drawn=tuple(saved),
        skipped=tuple(d for d in page.figures.values() if isinstance(d, Skipped)),
    )
