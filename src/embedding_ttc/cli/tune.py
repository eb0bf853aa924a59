"""The ``tune`` command: its flags into a typed config, then the tune run.

The flags become a :class:`~embedding_ttc.tune.config.TuneConfig` and a
:class:`~embedding_ttc.tune.run.TuneSetup`; :func:`~embedding_ttc.tune.run.run_tune` does the
rest.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from embedding_ttc.cli.common import (
    add_cache_options,
    add_data_dir,
    add_device,
    progress_bars,
    rich_console,
)
from embedding_ttc.errors import EmbeddingTTCError


def _config(args: argparse.Namespace) -> Any:
    from embedding_ttc.runs.config import ProposerSpec
    from embedding_ttc.tune.config import TaskSource, TuneConfig
    from embedding_ttc.tune.rule import TuneRule

    if args.task_dir is not None:
        folder = Path(args.task_dir)
        source = TaskSource(kind="beir", name=folder.resolve().name, path=str(folder.resolve()))
    elif args.corpus is not None:
        if args.queries is None or args.qrels is None:
            raise EmbeddingTTCError("tune: --corpus needs --queries and --qrels")
        fields = {"id": args.id_field, "text": args.text_field, "title": args.title_field}
        source = TaskSource(
            kind="files",
            name=args.name or Path(args.corpus).name.split(".")[0],
            corpus=str(Path(args.corpus).resolve()),
            queries=str(Path(args.queries).resolve()),
            qrels=str(Path(args.qrels).resolve()),
            fields={k: v for k, v in fields.items() if v},
            skip_invalid=args.skip_invalid,
        )
    else:
        source = TaskSource(kind="name", name=args.task)
    try:
        return TuneConfig(
            task=source,
            encoder=args.encoder,
            seed=args.seed,
            test_share=args.test_share,
            validation_share=args.validation_share,
            shortlist=args.shortlist,
            strategy=ProposerSpec(strategy=args.strategy, backend=args.backend),
            model=args.model,
            generations=args.generations,
            finalists=args.finalists,
            rule=TuneRule(max_slowdown=args.max_slowdown),
        )
    except ValueError as exc:  # pydantic's range checks, naming the field
        raise EmbeddingTTCError(f"tune: {exc}") from None


@contextmanager
def _bars(
    enabled: bool,
) -> Iterator[tuple[Callable[[str, int | None], None], Callable[[str], None]]]:
    """``(on_stage, on_advance)`` over one rich progress bar per stage, with its ETA."""
    with progress_bars(enabled, eta=True, transient=False) as progress:
        if progress is None:
            yield (lambda _name, _steps: None), (lambda _what: None)
            return
        current: dict[str, Any] = {}

        def on_stage(name: str, steps: int | None) -> None:
            if "id" in current:  # the stage before is done
                progress.update(current["id"], completed=progress.tasks[-1].total)
            current["id"] = progress.add_task(name, total=steps)

        def on_advance(_what: str) -> None:
            if "id" in current:
                progress.advance(current["id"])

        yield on_stage, on_advance


def cmd_tune(args: argparse.Namespace) -> int:
    """Tune a second stage on one task's judged queries; print the pick and its test table."""
    from embedding_ttc.search.open import BackendSetup, SearchSetup
    from embedding_ttc.tune.run import TuneEvents, TuneSetup, run_tune

    config = _config(args)
    where = SearchSetup(
        run_dir=args.run_dir,
        data_dir=args.data_dir,
        cache_dir=args.cache_dir,
        use_cache=not args.no_cache,
        device=args.device,
        executor=args.executor,
        ray_address=args.ray_address,
        backend=BackendSetup(base_url=args.base_url),
    )
    setup = TuneSetup(where, budget_minutes=args.budget_minutes)
    console = rich_console(highlight=False)
    with _bars(not args.no_progress) as (on_stage, on_advance):
        events = TuneEvents(on_stage=on_stage, on_advance=on_advance, say=console.print)
        pick, report_dir = run_tune(config, setup, events)
    what = pick.program if pick.program is not None else pick.program_file
    print(f"pick: {pick.name} ({pick.kind}): {what}")
    print((report_dir / "table.md").read_text(encoding="utf-8"))
    print(f"deploy it: embedding-ttc index build --from-tune {args.run_dir} --out INDEX_DIR")
    return 0


def add_tune_command(sub: Any) -> None:
    """Add ``tune`` to the subcommand parser."""
    from embedding_ttc.encoders.catalog import DEFAULT_ENCODER
    from embedding_ttc.executors import EXECUTORS
    from embedding_ttc.tune.config import (
        FINALISTS,
        INNER_VALIDATION_SHARE,
        SHORTLIST,
    )
    from embedding_ttc.tune.rule import MAX_SLOWDOWN
    from embedding_ttc.tune.split import TEST_SHARE

    tu = sub.add_parser(
        "tune",
        help="tune a second stage on your own judged queries: fusions, library programs and "
        "a program search, one pick, reported on test queries nothing chose on",
    )
    which = tu.add_mutually_exclusive_group(required=True)
    which.add_argument("--task", help="a packaged or shared task, or one under --data-dir")
    which.add_argument(
        "--task-dir",
        type=Path,
        metavar="DIR",
        help="your own task as a BEIR folder: corpus.jsonl, queries.jsonl, qrels/test.tsv",
    )
    which.add_argument(
        "--corpus",
        type=Path,
        help="your own corpus file, read as index build reads one (JSONL: BEIR's _id, title, "
        "text or Pyserini's id, contents; TSV: id, [title,] text); with --queries and --qrels",
    )
    tu.add_argument(
        "--queries", type=Path, help="with --corpus: JSONL (_id, text) or TSV (id, text)"
    )
    tu.add_argument("--qrels", type=Path, help="with --corpus: TSV (query id, doc id, grade)")
    tu.add_argument("--name", help="with --corpus: the task's name (default: the file's stem)")
    tu.add_argument(
        "--text-field", help="with --corpus: JSONL text field (default text, or contents)"
    )
    tu.add_argument("--id-field", help="with --corpus: JSONL id field (default _id, else id)")
    tu.add_argument("--title-field", help="with --corpus: JSONL title field (default title)")
    tu.add_argument(
        "--skip-invalid",
        action="store_true",
        help="with --corpus: skip (and count) records without text instead of refusing the file",
    )
    tu.add_argument("--run-dir", type=Path, required=True, help="the run folder (resumes)")
    tu.add_argument(
        "--encoder", default=DEFAULT_ENCODER, help=f"encoder name (default {DEFAULT_ENCODER})"
    )
    tu.add_argument(
        "--test-share",
        type=float,
        default=TEST_SHARE,
        metavar="F",
        help=f"share of the judged queries kept for the test report (default {TEST_SHARE})",
    )
    tu.add_argument(
        "--validation-share",
        type=float,
        default=INNER_VALIDATION_SHARE,
        metavar="F",
        help="share of the tune queries that only the pick reads (default "
        f"{INNER_VALIDATION_SHARE})",
    )
    tu.add_argument(
        "--shortlist",
        type=int,
        default=SHORTLIST,
        metavar="K",
        help=f"candidates per query, the dense top K (default {SHORTLIST})",
    )
    tu.add_argument(
        "--strategy",
        default="structural",
        help="how the search writes programs (default structural; an LLM strategy with "
        "--backend: draft, edit, guided)",
    )
    tu.add_argument(
        "--backend", help="the LLM backend of an LLM strategy (openai, anthropic, llama-cpp)"
    )
    tu.add_argument("--model", help="the LLM model name")
    tu.add_argument("--base-url", help="an OpenAI-compatible server URL")
    tu.add_argument(
        "--generations", type=int, default=30, help="the search's last generation (default 30)"
    )
    tu.add_argument(
        "--finalists",
        type=int,
        default=FINALISTS,
        help=f"the search's programs the pick weighs (default {FINALISTS})",
    )
    tu.add_argument(
        "--max-slowdown",
        type=float,
        default=MAX_SLOWDOWN,
        metavar="X",
        help=f"the pick's served time per query at most X times P0's (default {MAX_SLOWDOWN})",
    )
    tu.add_argument(
        "--budget-minutes",
        type=float,
        metavar="M",
        help="wall-time budget: the search stops in time for the rest to fit",
    )
    tu.add_argument(
        "--seed", type=int, default=0, help="seed of the cuts and the search (default 0)"
    )
    tu.add_argument(
        "--executor",
        default="inprocess",
        metavar="NAME",
        help=f"where the search's candidates run: {' or '.join(EXECUTORS)} (default inprocess)",
    )
    tu.add_argument("--ray-address", help="a Ray cluster for --executor ray")
    tu.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_data_dir(tu)
    add_cache_options(tu)
    add_device(tu)
    tu.set_defaults(func=cmd_tune)
