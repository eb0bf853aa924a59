"""The ``report`` command: the tables, figures and one HTML page of a transfer matrix.

``embedding-ttc report DIR [--search-run RUN]`` rereads the cells and writes the tables, the
figures (``DIR/figures``) and one self-contained page, ``DIR/report.html``; ``--against OTHER``
adds the cells whose scores differ from another run of the same matrix.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def cmd_report(args: argparse.Namespace) -> int:
    """Write the tables, the figures and ``DIR/report.html`` of a transfer matrix."""
    from embedding_ttc.analysis.report import write_report
    from embedding_ttc.analysis.report_page import build_page

    page = build_page(
        args.dir,
        search_run=args.search_run,
        program=args.program,
        prf_task=args.prf_task,
        seed=args.seed,
    )
    files = write_report(page)
    r = page.report
    print(
        f"report: {len(r.encoders)} encoders × {len(r.tasks)} held-out tasks × "
        f"{len(r.programs)} programs; {len(r.cells)} cells present, {len(r.missing)} missing",
        file=sys.stderr,
    )
    print(f"report: figures drawn: {', '.join(files.drawn) or 'none'}", file=sys.stderr)
    for skipped in files.skipped:
        print(f"report: not drawn: {skipped.figure}: {skipped.reason}", file=sys.stderr)
    print(f"report: tables in {files.tables}, figures in {args.dir / 'figures'}", file=sys.stderr)
    if args.against is not None:
        _write_against(args.dir, args.against, files.tables, (*r.encoders, *r.tasks))
    print(files.html)
    return 0


def _write_against(ours: Path, other: Path, tables: Path, order: Sequence[str]) -> None:
    """The cells of ``ours`` and ``other`` side by side, written beside the report's tables."""
    from embedding_ttc.analysis.inputs import scan_cells
    from embedding_ttc.analysis.side_by_side import SideBySide, side_by_side_grids
    from embedding_ttc.analysis.tables import write_grids

    pair = SideBySide.from_cells(scan_cells(ours), scan_cells(other), order=order)
    stem = f"against-{pair.label_b if pair.label_b != 'B' else other.name}"
    grids = side_by_side_grids(pair)
    write_grids(tables, {stem: grids["gaps"], f"{stem}-cells": grids["cells"]})
    print(
        f"report: against {other}: {len(pair.programs)} programs differ "
        f"({', '.join(pair.programs) or 'none'}), {len(pair.unchanged)} identical; "
        f"{tables / stem}.md",
        file=sys.stderr,
    )


def add_report_command(sub: Any) -> None:
    """Add ``report`` to the subcommand parser."""
    from embedding_ttc.analysis.figure_data.prf import DEFAULT_PRF_TASK
    from embedding_ttc.analysis.figure_data.transfer import DEFAULT_PROGRAM

    rp = sub.add_parser(
        "report",
        help="one self-contained HTML page (figures and tables) over a transfer matrix",
    )
    rp.add_argument("dir", type=Path, metavar="DIR", help="the matrix directory (transfer --out)")
    rp.add_argument(
        "--search-run",
        type=Path,
        metavar="RUN",
        help="search run of the Pareto and trajectory figures (default: the one transfer.json "
        "records)",
    )
    rp.add_argument(
        "--program",
        help=f"program of the per-encoder bars (default {DEFAULT_PROGRAM} when in the matrix)",
    )
    rp.add_argument(
        "--prf-task",
        default=DEFAULT_PRF_TASK,
        help=f"task of the Rocchio-against-SoftCentroid bars (default {DEFAULT_PRF_TASK})",
    )
    rp.add_argument("--seed", type=int, default=0, help="seed of the trajectory's UMAP layout")
    rp.add_argument(
        "--against",
        type=Path,
        metavar="OTHER",
        help="another run of the same matrix (e.g. under another --tokenizer): every shared cell "
        "whose scores differ, DIR's minus OTHER's, in DIR/tables/against-<name>*.md|csv|tex",
    )
    rp.set_defaults(func=cmd_report)
