"""The ``tasks`` and ``encoders`` commands: what this machine can evaluate on, and with.

``tasks`` lists every task that resolves (data root folders, packaged, generated), with its
statistics, and the suites; ``encoders`` lists the encoders with their views and whether each
runs here. Both print a table, or JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from embedding_ttc.cli.common import add_data_dir, print_listing, rich_console


def cmd_tasks(args: argparse.Namespace) -> int:
    """List every task that resolves here (data root folders, packaged, generated) and the suites.

    A task that cannot be loaded is listed with the loader's reason (``malformed`` for a folder,
    ``unavailable`` for a generated task without its source); every other task still is.
    """
    from embedding_ttc.tasks.beir_archives import fetchable_names
    from embedding_ttc.tasks.catalog import (
        find_data_root,
        suite_description,
        suite_names,
        suite_tasks,
    )
    from embedding_ttc.tasks.listing import list_tasks

    root = find_data_root(args.data_dir)
    listing = list_tasks(root)
    suites = {
        s: {"description": suite_description(s), "tasks": suite_tasks(s)} for s in suite_names()
    }
    fetchable = fetchable_names(root)  # BEIR datasets `data fetch NAME` can add
    if args.json:
        print(json.dumps({**listing.to_json(), "suites": suites, "fetchable": fetchable}, indent=2))
        return 0
    _print_tasks(listing, suites, fetchable, rich_console(stderr=False))
    return 0


def _print_tasks(listing: Any, suites: dict[str, Any], fetchable: list[str], console: Any) -> None:
    from rich.markup import escape

    rows = []
    for e in listing.with_status("ok"):
        s = e.stats
        member = [n for n, v in suites.items() if e.task in v["tasks"]]
        rows.append(
            (
                e.task,
                str(s["n_docs"]),
                str(s["n_queries"]),
                str(s["n_qrels"]),
                str(s["mean_doc_words"]),
                "yes" if s["pool"] else "",
                e.origin if e.origin != "data root" else e.path,
                ", ".join(member),
            )
        )
    columns = ("task", "docs", "queries", "qrels", "words/doc", "pool", "from", "suites")
    print_listing("tasks", columns, rows, whole=range(6))
    where = (
        f"data root: {listing.data_dir}"
        if listing.data_dir
        else "no data root: packaged tasks only"
    )
    console.print(where, soft_wrap=True)
    for status in ("malformed", "unavailable"):
        for bad in listing.with_status(status):
            detail = escape(f"{bad.task} ({bad.path or bad.origin}): {bad.error}")
            console.print(
                f"[bold red]{status}[/bold red] {detail}", highlight=False, soft_wrap=True
            )
    for name, suite in suites.items():
        console.print(
            f"[bold]{name}[/bold]: {', '.join(suite['tasks'])} — {suite['description']}",
            soft_wrap=True,
        )
    if fetchable:
        console.print(
            f"[bold]fetchable[/bold] (embedding-ttc data fetch NAME): {', '.join(fetchable)}",
            soft_wrap=True,
        )


def cmd_encoders(args: argparse.Namespace) -> int:
    """List encoders with their views; ``--json`` lists those that run on this machine."""
    from embedding_ttc.encoders.catalog import ENCODERS

    specs = [ENCODERS.get(n) for n in ENCODERS]
    if args.json:
        records = [
            {
                "name": s.name,
                "family": s.family,
                "dim": s.dim,
                "views": {v: spec.describe() for v, spec in s.views.items()},
                "collapsed": s.collapsed,
                "offline": s.offline,
            }
            for s in specs
            if s.available() or args.all
        ]
        print(json.dumps(records, indent=2))
        return 0

    rows = []
    for s in specs:
        views = (
            "collapsed (one shared view)"
            if s.collapsed
            else "; ".join(f"{v}: {spec.describe()}" for v, spec in s.views.items())
        )
        missing = s.missing()
        here = (
            "yes" if s.available() else ("needs network" if not missing else f"pip: {missing[0]}")
        )
        rows.append((s.name, s.family, str(s.dim), views, here, s.description))
    print_listing("encoders", ("name", "family", "dim", "views", "runs here", "source"), rows)
    return 0


def add_catalog_commands(sub: Any) -> None:
    """Add ``tasks`` and ``encoders`` to the subcommand parsers."""
    ts = sub.add_parser("tasks", help="list tasks (with statistics) and suites")
    add_data_dir(ts)
    ts.add_argument(
        "--json",
        action="store_true",
        help="print {data_dir, tasks, malformed, unavailable, suites, fetchable} as JSON only",
    )
    ts.set_defaults(func=cmd_tasks)

    en = sub.add_parser("encoders", help="list encoders and their views")
    en.add_argument("--json", action="store_true", help="JSON array of the encoders that run here")
    en.add_argument(
        "--all", action="store_true", help="with --json: also encoders that need a network"
    )
    en.set_defaults(func=cmd_encoders)
