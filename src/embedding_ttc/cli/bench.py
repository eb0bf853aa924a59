"""The ``bench`` command: the harness's overhead and the cache's speed-up of P0 on a suite."""

from __future__ import annotations

import argparse
from typing import Any

from embedding_ttc.cli.common import add_backend, add_data_dir, add_device, with_backend


def cmd_bench(args: argparse.Namespace) -> int:
    """Run P0 cold and warm on a suite and print overhead and warm speed-up."""
    from embedding_ttc.bench import run_bench

    report = run_bench(
        suite=args.suite,
        encoder_name=with_backend(args.encoder, args.backend),
        data_dir=args.data_dir,
        tasks=args.task,
        device=args.device,
        log=lambda line: print(line, flush=True),
    )
    print(report.last_line())
    return 0


def add_bench_command(sub: Any) -> None:
    """Add ``bench`` to the subcommand parsers."""
    from embedding_ttc.encoders.catalog import DEFAULT_ENCODER

    be = sub.add_parser("bench", help="harness overhead and cache speed-up of P0 on a suite")
    be.add_argument("--suite", default="smoke", help="suite to run P0 on (default smoke)")
    be.add_argument("--task", action="append", help="restrict to these tasks of the suite")
    be.add_argument(
        "--encoder", default=DEFAULT_ENCODER, help=f"encoder name (default {DEFAULT_ENCODER})"
    )
    add_data_dir(be)
    add_backend(be)
    add_device(be)
    be.set_defaults(func=cmd_bench)
