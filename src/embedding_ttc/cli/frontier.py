"""The ``frontier`` command: a search run's frontier under a rule, derived from its ledger."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.runs.frontier import RULES
from embedding_ttc.runs.ledger import Ledger
from embedding_ttc.runs.records import OBJECTIVES


def cmd_frontier(args: argparse.Namespace) -> int:
    """Print the frontier of a run directory under a rule, derived from its ledger."""
    from embedding_ttc.runs.config import read_run_config
    from embedding_ttc.runs.frontier import frontier, frontier_json, render_frontier
    from embedding_ttc.runs.ledger import LEDGER_FILE

    if not (Path(args.run_dir) / LEDGER_FILE).exists():
        raise EmbeddingTTCError(f"no {LEDGER_FILE} in {args.run_dir}: not a search run directory")
    ledger = Ledger(args.run_dir)
    if args.pick:
        return _print_pick(ledger, as_json=args.json)
    config = read_run_config(ledger.run_dir)
    objective = args.objective or (config.objective if config is not None else "p0")
    front = frontier(ledger.records, args.rule, objective)
    if args.json:
        print(json.dumps(frontier_json(front), indent=2))
    else:
        print(render_frontier(front, len(ledger.records)))
    return 0


def _print_pick(ledger: Ledger, *, as_json: bool) -> int:
    """Print the program the run's registered rule names (``--pick``)."""
    from embedding_ttc.runs.pick import (
        pick,
        pick_json,
        read_reference,
        registered_rule,
        render_pick,
    )

    rule, now = registered_rule(ledger.run_dir, ledger.records)
    result = pick(ledger.records, rule, now, read_reference(ledger.run_dir))
    print(json.dumps(pick_json(result), indent=2) if as_json else render_pick(result))
    return 0


def add_frontier_command(sub: Any) -> None:
    """Add ``frontier`` to the subcommand parser."""
    fr = sub.add_parser("frontier", help="the frontier of a search run, from its ledger")
    fr.add_argument(
        "run_dir", type=Path, help="a search run directory (the folder of ledger.jsonl)"
    )
    fr.add_argument(
        "--rule",
        choices=tuple(RULES),
        default="compute",
        help="; ".join(f"{name}: {what}" for name, what in RULES.items()),
    )
    fr.add_argument(
        "--objective",
        choices=OBJECTIVES,
        help="Δ against P0 or the run's reference (default: the run's objective)",
    )
    fr.add_argument(
        "--pick",
        action="store_true",
        help="print the one program the run's registered pick rule names (pick-rule.json)",
    )
    fr.add_argument("--json", action="store_true", help="print the frontier as JSON only")
    fr.set_defaults(func=cmd_frontier)
