"""The ``selection`` command: which selection signal predicts transfer, on discovery tasks only."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.runs.records import OBJECTIVES


def cmd_selection(args: argparse.Namespace) -> int:
    """Print each signal's agreement across cuts of a run's discovery tasks."""
    from embedding_ttc.analysis.selection import (
        agreement,
        agreement_json,
        render_agreement,
        task_deltas,
    )
    from embedding_ttc.runs.ledger import LEDGER_FILE, Ledger

    if not (Path(args.run_dir) / LEDGER_FILE).exists():
        raise EmbeddingTTCError(f"no {LEDGER_FILE} in {args.run_dir}: not a search run directory")
    records = Ledger(args.run_dir).records
    try:
        table = task_deltas(records, args.objective, args.scope)
        rows = agreement(table, held_aside=args.held_aside, cuts=args.cuts, seed=args.seed)
    except ValueError as exc:
        raise EmbeddingTTCError(f"selection: {exc}") from None
    if args.json:
        print(json.dumps(agreement_json(table, rows, args.held_aside), indent=2))
    else:
        print(render_agreement(table, rows, args.held_aside))
    return 0


def add_selection_command(sub: Any) -> None:
    """Add ``selection`` to the subcommand parser."""
    se = sub.add_parser(
        "selection",
        help="which selection signal, computed on some discovery tasks of a run, predicts "
        "the programs' standing on the others",
    )
    se.add_argument("run_dir", type=Path, help="a search run directory (ledger.jsonl)")
    se.add_argument(
        "--objective", choices=OBJECTIVES, default="reference", help="Δ against (default reference)"
    )
    se.add_argument(
        "--scope",
        choices=("all", "search", "validation"),
        default="validation",
        help="the queries of each task read (default validation)",
    )
    se.add_argument("--held-aside", type=int, default=3, help="tasks held aside per cut (3)")
    se.add_argument("--cuts", type=int, default=200, help="how many cuts (default 200)")
    se.add_argument("--seed", type=int, default=0, help="the cuts' seed (default 0)")
    se.add_argument("--json", action="store_true", help="print JSON only")
    se.set_defaults(func=cmd_selection)
