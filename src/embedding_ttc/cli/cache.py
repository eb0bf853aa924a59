"""The ``cache stats`` and ``cache prune`` commands over the embedding cache.

Thin wiring of :mod:`embedding_ttc.encoders.cache_admin` (what each model's database holds,
pruning).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from embedding_ttc.cli.common import print_listing


def _root(args: argparse.Namespace) -> Path:
    from embedding_ttc.encoders.cache import default_cache_dir

    return Path(args.cache_dir).expanduser() if args.cache_dir else default_cache_dir()


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f}"


def cmd_cache_stats(args: argparse.Namespace) -> int:
    """Per model and view: entries, dimension, bytes of vectors, bytes on disk, their ratio."""
    from embedding_ttc.encoders.cache_admin import cache_folders

    root = _root(args)
    folders = cache_folders(root)
    if args.json:
        models = []
        for f in folders:
            s = f.summary
            models.append(
                {
                    "model": f.name,
                    "model_id": s.model_id,
                    "revision": s.revision,
                    "dim": s.dim,
                    "entries": s.entries,
                    "views": s.views,
                    "vector_bytes": s.vector_bytes,
                    "disk_bytes": s.disk_bytes,
                    "ratio": None if math.isnan(s.ratio) else round(s.ratio, 4),
                }
            )
        print(json.dumps({"cache_dir": str(root), "models": models}, indent=2))
        return 0
    rows = []
    for f in folders:
        s = f.summary
        for view, n in s.views.items():
            rows.append((f.name, view, f"{n:,}", str(s.dim), _mb(n * 4 * s.dim), "", ""))
        ratio = "" if math.isnan(s.ratio) else f"{s.ratio:.2f}"
        total = (f.name, "all", f"{s.entries:,}", str(s.dim), _mb(s.vector_bytes))
        rows.append((*total, _mb(s.disk_bytes), ratio))
    print_listing(
        "Embedding cache",
        ("model", "view", "entries", "dim", "vectors MB", "disk MB", "disk/vectors"),
        rows,
        whole=(0, 1),
        caption=f"cache: {root}",
    )
    return 0


def cmd_cache_prune(args: argparse.Namespace) -> int:
    """Delete a model's entries, entries older than N days, or all; then VACUUM."""
    from embedding_ttc.encoders.cache_admin import prune

    root = _root(args)
    done = prune(
        root,
        model=args.model,
        older_than_days=args.older_than,
        dry_run=args.dry_run,
    )
    verb = "would delete" if args.dry_run else "deleted"
    rows: list[Any] = [
        (p.name, f"{p.entries:,}", _mb(p.disk_before), _mb(p.disk_after)) for p in done
    ]
    print_listing(
        "Pruned" if not args.dry_run else "Would prune (dry run)",
        ("model", f"entries {verb}", "disk MB before", "disk MB after"),
        rows,
        caption=f"cache: {root}",
    )
    return 0


def _days(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of days: {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"days must be 0 or more, got {text}")
    return value


def add_cache_commands(sub: Any) -> None:
    """Add ``cache stats`` and ``cache prune`` to the subcommand parsers."""
    cache = sub.add_parser("cache", help="inspect and prune the embedding cache")
    group = cache.add_subparsers(dest="cache_command", required=True)
    dir_help = "embedding cache (default: $EMBEDDING_TTC_CACHE or the user cache dir)"

    stats = group.add_parser(
        "stats",
        help="entries, dimension and disk use per model and view",
        description="Per model and view: entries, dimension and bytes of vectors; per model: "
        "bytes on disk and their ratio to the vectors held.",
    )
    stats.add_argument("--cache-dir", type=Path, metavar="DIR", help=dir_help)
    stats.add_argument("--json", action="store_true", help="print JSON")
    stats.set_defaults(func=cmd_cache_stats)

    prune = group.add_parser(
        "prune",
        help="delete cached embeddings, then give the space back (VACUUM)",
        description="Delete one model's entries, the entries written more than DAYS days "
        "ago, or all entries; then VACUUM each database so the disk space is freed. Age is "
        "the time an entry was written: reads do not refresh it.",
    )
    prune.add_argument("--cache-dir", type=Path, metavar="DIR", help=dir_help)
    which = prune.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--model", metavar="NAME", help="every entry of this model (folder name or model id)"
    )
    which.add_argument(
        "--older-than",
        type=_days,
        metavar="DAYS",
        help="entries of every model written more than DAYS days ago",
    )
    which.add_argument("--all", action="store_true", help="every entry of every model")
    prune.add_argument(
        "--dry-run", action="store_true", help="count what would be deleted, delete nothing"
    )
    prune.set_defaults(func=cmd_cache_prune)
