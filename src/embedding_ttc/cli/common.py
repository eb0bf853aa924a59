"""What every command shares: running it, consoles and progress, building an encoder.

A command is a function ``cmd(args) -> int`` set as ``args.func`` by its group's parser;
:func:`run_command` runs it with the command line's error conventions. Command groups import
this module and nothing else of :mod:`embedding_ttc.cli`, so imports run one way: the root
parser (:mod:`embedding_ttc.cli`) imports the groups, the groups import ``common``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from embedding_ttc.errors import EmbeddingTTCError


def command_line(args: argparse.Namespace) -> list[str]:
    """The command as the user gave it, for manifests: ``main(argv)``'s words, else sys.argv."""
    words = getattr(args, "argv", None)
    return ["embedding-ttc", *(sys.argv[1:] if words is None else words)]


def rich_console(stderr: bool = True, highlight: bool = True) -> Any:
    """A rich console on stderr (progress, warnings) or stdout (results).

    ``highlight=False`` prints text as given (no colouring of numbers and paths), for logs.
    On stderr that is not a terminal (a log file, a pipe, a CI job), lines are not wrapped:
    rich would break them at 80 columns, mid-sentence, where a reader or ``grep`` wants one
    message a line.
    """
    from rich.console import Console

    soft_wrap = stderr and not sys.stderr.isatty()
    return Console(stderr=stderr, highlight=highlight, soft_wrap=soft_wrap)


@contextmanager
def progress_bars(enabled: bool, *, eta: bool = False, transient: bool = True) -> Iterator[Any]:
    """A rich progress display on stderr (``None`` when disabled); ``eta``: a time-left column."""
    if not enabled:
        yield None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns: list[Any] = [
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    ]
    if eta:
        columns += [TextColumn("ETA"), TimeRemainingColumn()]
    with Progress(*columns, console=rich_console(), transient=transient) as progress:
        yield progress


def staged(progress: Any) -> Callable[[str, int, int], None]:
    """An ``(stage, done, total)`` callback over a rich ``Progress``: one bar per stage.

    ``total`` 0 means unknown (the bar then only counts).
    """
    bars: dict[str, Any] = {}

    def update(stage: str, done: int, total: int) -> None:
        size = total if total > 0 else None
        if stage not in bars:
            bars[stage] = progress.add_task(stage, total=size)
        progress.update(bars[stage], completed=done, total=size)

    return update


@contextmanager
def stage_progress(enabled: bool) -> Iterator[Callable[[str, int, int], None] | None]:
    """:func:`progress_bars` fed ``(stage, done, total)`` by :func:`staged`; ``None`` if off."""
    with progress_bars(enabled) as progress:
        yield None if progress is None else staged(progress)


def print_listing(
    title: str,
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    whole: Iterable[int] = (0,),
    caption: str = "",
) -> None:
    """Print a listing on stdout: a table on a terminal, tab-separated lines elsewhere.

    The columns at ``whole`` hold names a user types (tasks, encoders, programs) or short
    values: on a terminal they never wrap nor shrink below their longest value (the other
    columns wrap at words instead), and piped output is plain text, one row per line,
    whatever the width.
    """
    whole = set(whole)
    if not sys.stdout.isatty():
        print("\t".join(header))
        for row in rows:
            print("\t".join(" ".join(str(v).split()) for v in row))
        if caption:
            print(caption)
        return
    from rich.table import Table

    table = Table(title=title, caption=caption or None)
    for i, col in enumerate(header):
        if i in whole:
            width = max([len(col), *(len(str(r[i])) for r in rows)])
            table.add_column(col, no_wrap=True, min_width=width)
        else:
            table.add_column(col)
    for row in rows:
        table.add_row(*(str(v) for v in row))
    rich_console(stderr=False).print(table)


def add_timeout(parser: argparse.ArgumentParser, *, resumed: bool = False) -> None:
    """``--timeout S``: the sandbox's wall time of a program on a task, encodes served included.

    With ``resumed`` (``search``) the option defaults to ``None``: a resumed run keeps the
    limit it recorded, a new one takes the default.
    """
    from embedding_ttc.program_files.sandbox.limits import DEFAULT_WALL_SECONDS

    default = DEFAULT_WALL_SECONDS
    parser.add_argument(
        "--timeout",
        type=float,
        default=None if resumed else default,
        metavar="S",
        help="wall-time limit in seconds of a program file on one task: its own compute and "
        f"the encodes it has served (default {default:g}"
        f"{'; a resumed run: as recorded' if resumed else ''}; beyond, status timeout)",
    )


def add_encode_budget(parser: argparse.ArgumentParser, *, resumed: bool = False) -> None:
    """``--encode-budget N``: the sandbox's encoder budget of a program, for every command.

    With ``resumed`` (``search``) the option defaults to ``None``: a resumed run keeps the
    budget it recorded, a new one takes the default.
    """
    from embedding_ttc.program_files.sandbox.limits import DEFAULT_ENCODE_TEXTS_PER_ITEM

    default = DEFAULT_ENCODE_TEXTS_PER_ITEM
    parser.add_argument(
        "--encode-budget",
        type=float,
        default=None if resumed else default,
        metavar="N",
        help="texts a program may have encoded per query and document of a task "
        f"(default {default:g}{'; a resumed run: as recorded' if resumed else ''}; beyond, "
        "it ends with status budget)",
    )


def _device(text: str) -> str:
    from embedding_ttc.encoders.device import check_device
    from embedding_ttc.errors import UnknownNameError

    try:
        return check_device(text)
    except UnknownNameError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _tokenizer(text: str) -> str:
    from embedding_ttc.errors import UnknownNameError
    from embedding_ttc.programs.primitives.tokenizers import get_tokenizer

    try:
        return get_tokenizer(text).name
    except UnknownNameError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_tokenizer(parser: argparse.ArgumentParser) -> None:
    """``--tokenizer NAME``: the lexical channels' tokenizer, for this process and its children."""
    from embedding_ttc.programs.primitives.tokenizers import DEFAULT_TOKENIZER, TOKENIZER_ENV

    parser.add_argument(
        "--tokenizer",
        type=_tokenizer,
        metavar="NAME",
        help=f"tokenizer of every lexical channel (BM25 included): unicode, letters or ascii "
        f"(default ${TOKENIZER_ENV}, else {DEFAULT_TOKENIZER}); recorded with the results",
    )


DATA_DIR_HELP = (
    "folder of task folders (default: $EMBEDDING_TTC_DATA, ../shared/datasets, or the user "
    "data folder; the packaged tasks need none)"
)


def add_data_dir(parser: argparse.ArgumentParser) -> None:
    """``--data-dir DIR``: the data root, for every command that reads tasks."""
    parser.add_argument("--data-dir", type=Path, metavar="DIR", help=DATA_DIR_HELP)


def add_cache_options(parser: argparse.ArgumentParser) -> None:
    """``--cache-dir DIR`` and ``--no-cache``: the embedding cache of every encoding command."""
    parser.add_argument(
        "--cache-dir",
        type=Path,
        metavar="DIR",
        help="embedding cache (default: $EMBEDDING_TTC_CACHE or the user cache dir)",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="do not read or write the embedding cache"
    )


def add_backend(parser: argparse.ArgumentParser) -> None:
    """``--backend``: the encoder's runtime, for every command that encodes."""
    from embedding_ttc.encoders.catalog import BACKENDS

    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default="torch",
        help="encoder runtime: torch (default) or onnx-int8 (needs the onnx extra)",
    )


def add_device(parser: argparse.ArgumentParser) -> None:
    """``--device``: where the encoder runs, for every command that encodes."""
    parser.add_argument(
        "--device",
        type=_device,
        default="auto",
        metavar="DEVICE",
        help="where the encoder runs: auto (default: CUDA, else MPS, else CPU), cpu, cuda, "
        "cuda:N or mps; encoders that are not torch models run on the CPU only and refuse "
        "any other device",
    )


def build_encoder(
    name: str,
    cache_dir: Path | None,
    no_cache: bool,
    backend: str = "torch",
    device: str = "auto",
) -> Any:
    """Load an encoder on ``backend`` and ``device``; wrap it in the on-disk cache unless asked."""
    from embedding_ttc.encoders.named import NamedEncoder

    return NamedEncoder(name, backend, cache_dir, use_cache=not no_cache, device=device).load()


def with_backend(name: str, backend: str) -> str:
    """``name@backend`` for a backend other than torch (the name that encoder reports)."""
    return name if backend == "torch" or "@" in name else f"{name}@{backend}"


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM (a job scheduler's or ``kill``'s stop) acts as Ctrl-C does.

    Commands then finish their ``finally`` clauses (a transfer run's log record, a search's
    ledger) instead of dying mid-write. Only the main thread can set handlers; elsewhere, and
    where SIGTERM is not available, the block runs unchanged.
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGTERM"):
        yield
        return

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_command(args: argparse.Namespace, on_interrupt: str) -> int:
    """Run a parsed command: a user error prints one line and exits 2; Ctrl-C exits 130.

    ``on_interrupt`` tells the user what an interruption leaves behind. SIGTERM is taken
    as an interruption too (:func:`terminate_as_interrupt`).
    """
    try:
        if getattr(args, "tokenizer", None):
            from embedding_ttc.programs.primitives.tokenizers import select_tokenizer

            select_tokenizer(args.tokenizer)  # in the environment: child processes agree
        with terminate_as_interrupt():
            return int(args.func(args))
    except EmbeddingTTCError as exc:
        print(f"embedding-ttc: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into a pager or head that closed early
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print(f"embedding-ttc: interrupted; {on_interrupt}", file=sys.stderr)
        return 130
