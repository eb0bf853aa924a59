"""``embedding-ttc programs``: every registered program, its groups, version and cost recipe."""

from __future__ import annotations

import argparse
import json
from typing import Any

from embedding_ttc.cli.common import print_listing


def cmd_programs(args: argparse.Namespace) -> int:
    """List the programs (``--json``: one record each, and the groups)."""
    from embedding_ttc.programs.listing import group_members, program_entries
    from embedding_ttc.programs.recipe import Recipe

    entries = program_entries()
    if args.json:
        listing = {
            "programs": [e.model_dump() for e in entries],
            "groups": group_members(),
        }
        print(json.dumps(listing, indent=2))
        return 0
    rows = []
    for e in entries:
        index_time = ", ".join(e.index_time) or "-"
        if e.lexical:
            index_time = f"{index_time} + BM25 statistics" if e.index_time else "BM25 statistics"
        per_query_text = Recipe(
            query_encodes=e.query_encodes, query_encodes_collapsed=e.query_encodes_collapsed
        ).encodes_per_query()
        rows.append(
            (
                e.name,
                ", ".join(e.groups) or "-",
                str(e.version),
                e.description.replace("``", ""),
                index_time,
                per_query_text,
                e.batch,
            )
        )
    print_listing(
        "programs",
        ("name", "groups", "version", "what it does", "index time", "encodes per query", "batch"),
        rows,
        whole=(0, 2, 6),
    )
    groups = group_members()
    print()
    print_listing(
        "groups (--program NAME runs every member)",
        ("group", "members"),
        [(g, " ".join(m)) for g, m in groups.items()],
    )
    return 0


def add_program_commands(sub: Any) -> None:
    """Add ``programs`` to the root parser's subcommands."""
    pr = sub.add_parser(
        "programs",
        help="list the programs: groups, version, what each does and what it costs",
        description="Every registered program with the groups that name it, its version, a "
        "one-line description and the recipe of its cost: what an index precomputes per "
        "document and how many texts it encodes per query.",
    )
    pr.add_argument(
        "--json",
        action="store_true",
        help="print {programs: [...], groups: {...}} as JSON and nothing else",
    )
    pr.set_defaults(func=cmd_programs)
