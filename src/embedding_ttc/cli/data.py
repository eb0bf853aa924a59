"""The ``data fetch`` and ``data list`` commands: thin wiring of :mod:`embedding_ttc.tasks.fetch`.

``data fetch NAME`` installs a BEIR dataset as a task folder under ``--to DIR`` (default
``$EMBEDDING_TTC_DATA``, else ``$XDG_DATA_HOME/embedding-ttc/datasets``); ``data list`` lists
the fetchable datasets and whether each is there.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from embedding_ttc.cli.common import print_listing, rich_console, staged


@contextmanager
def _byte_progress(enabled: bool) -> Iterator[Any]:
    """A ``(stage, done, total)`` callback drawing byte counts and speed on stderr."""
    if not enabled:
        yield None
        return
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=rich_console(),
        transient=True,
    ) as progress:
        yield staged(progress)


def _target(args: argparse.Namespace) -> Path:
    from embedding_ttc.tasks.fetch import default_fetch_dir

    return Path(args.to).expanduser() if args.to else default_fetch_dir()


def cmd_data_fetch(args: argparse.Namespace) -> int:
    """Download, check and install one BEIR dataset; print the task folder on stdout."""
    from embedding_ttc.tasks.fetch import fetch_beir

    root = _target(args)
    with _byte_progress(not args.no_progress) as progress:
        result = fetch_beir(
            args.name,
            root,
            source=args.source,
            base_url=args.base_url,
            force=args.force,
            progress=progress,
        )
    for warning in result.warnings:
        print(f"embedding-ttc: warning: {warning}", file=sys.stderr)
    if result.status == "present":
        print(
            f"embedding-ttc: {result.folder} is already there (pass --force to fetch it again)",
            file=sys.stderr,
        )
    else:
        print(f"embedding-ttc: installed {result.name} in {result.folder}", file=sys.stderr)
    print(result.folder)
    return 0


def cmd_data_list(args: argparse.Namespace) -> int:
    """List the fetchable BEIR datasets, their archive sizes and whether each is installed."""
    from embedding_ttc.tasks.beir_archives import ARCHIVES
    from embedding_ttc.tasks.fetch import is_complete_task_folder

    root = _target(args)
    archives = [ARCHIVES.get(n) for n in ARCHIVES.names()]
    installed = {a.name: is_complete_task_folder(root / a.name) for a in archives}
    if args.json:
        rows = [
            {"name": a.name, "bytes": a.bytes, "md5": a.md5, "installed": installed[a.name]}
            for a in archives
        ]
        print(json.dumps({"data_dir": str(root), "datasets": rows}, indent=2))
        return 0
    lines = [
        (a.name, f"{a.bytes / 1e6:,.1f}", "yes" if installed[a.name] else "") for a in archives
    ]
    print_listing(
        "BEIR datasets",
        ("dataset", "archive MB", "installed"),
        lines,
        caption=f"installed under {root}",
    )
    return 0


def add_data_commands(sub: Any) -> None:
    """Add ``data fetch`` and ``data list`` to the subcommand parsers."""
    data = sub.add_parser("data", help="download datasets as task folders")
    group = data.add_subparsers(dest="data_command", required=True)
    to_help = (
        "folder of task folders (default: the data root the other commands read: "
        "$EMBEDDING_TTC_DATA, ../shared/datasets or $XDG_DATA_HOME/embedding-ttc/datasets)"
    )

    fetch = group.add_parser(
        "fetch",
        help="download a BEIR dataset, check its MD5, install it as DIR/NAME",
        description="Download a BEIR dataset archive (resumable), check it against its "
        "published MD5, and install it as a task folder in one atomic rename.",
    )
    fetch.add_argument("name", metavar="NAME", help="BEIR dataset name (see: data list)")
    fetch.add_argument("--to", metavar="DIR", help=to_help)
    fetch.add_argument(
        "--from",
        dest="source",
        metavar="FILE|URL",
        help="install from this archive instead of BEIR's server (a NAME BEIR does not "
        "list is installed unverified, its SHA-256 recorded)",
    )
    fetch.add_argument(
        "--base-url",
        metavar="URL",
        help="a server with BEIR's file names (<URL>/<NAME>.zip) instead of BEIR's "
        "(default: $EMBEDDING_TTC_BEIR_URL, else BEIR's own)",
    )
    fetch.add_argument("--force", action="store_true", help="replace a folder already there")
    fetch.add_argument("--no-progress", action="store_true", help="no progress bars")
    fetch.set_defaults(func=cmd_data_fetch)

    listing = group.add_parser("list", help="list the fetchable BEIR datasets")
    listing.add_argument("--to", metavar="DIR", help=to_help)
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(func=cmd_data_list)
