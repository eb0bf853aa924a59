"""The ``embedding-ttc`` command line: thin commands over library calls.

One module per command group (:mod:`.evaluate`, with :mod:`.catalogs` and :mod:`.bench`;
:mod:`.programs`, :mod:`.search` and :mod:`.frontier`, :mod:`.analysis`, with :mod:`.report`;
:mod:`.deploy`, :mod:`.data`, :mod:`.cache`), each adding its subcommands to the root parser
built here; what they share (running a command, consoles and progress, building an encoder) is
in :mod:`.common`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from embedding_ttc import __version__
from embedding_ttc.cli.common import run_command


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    # The groups are imported here, not at the top, so that ``python -m
    # embedding_ttc.cli.deploy`` (a group run on its own) does not find itself already imported.
    from embedding_ttc.cli.analysis import add_analysis_commands
    from embedding_ttc.cli.cache import add_cache_commands
    from embedding_ttc.cli.data import add_data_commands
    from embedding_ttc.cli.deploy import add_deploy_commands
    from embedding_ttc.cli.evaluate import add_evaluate_commands
    from embedding_ttc.cli.frontier import add_frontier_command
    from embedding_ttc.cli.programs import add_program_commands
    from embedding_ttc.cli.search import add_search_commands
    from embedding_ttc.cli.selection import add_selection_command
    from embedding_ttc.cli.tune import add_tune_command

    parser = argparse.ArgumentParser(
        prog="embedding-ttc",
        description="Test-time compute for frozen embedding models: evaluate programs over a "
        "metered encoder on retrieval suites.",
    )
    parser.add_argument("--version", action="version", version=f"embedding-ttc {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    add_evaluate_commands(sub)
    add_program_commands(sub)
    add_search_commands(sub)
    add_tune_command(sub)
    add_frontier_command(sub)
    add_selection_command(sub)
    add_analysis_commands(sub)
    add_deploy_commands(sub)
    add_data_commands(sub)
    add_cache_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``embedding-ttc`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = None if argv is None else list(argv)
    if args.command == "evaluate":
        from embedding_ttc.encoders.catalog import DEFAULT_ENCODER

        args.encoder = args.encoder or [DEFAULT_ENCODER]
        args.program = args.program or ["P0"]
    return run_command(args, "files already written are complete")


if __name__ == "__main__":
    sys.exit(main())
