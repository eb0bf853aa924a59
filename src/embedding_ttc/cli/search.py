"""The ``search`` command: its flags turned into a run's config and setup, then opened.

The search itself is :func:`embedding_ttc.search.open.open_search`; this module only reads
the command line into its :class:`~embedding_ttc.runs.config.RunConfig` and
:class:`~embedding_ttc.search.open.SearchSetup` and prints the progress and the frontier.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from embedding_ttc.cli.common import (
    add_cache_options,
    add_data_dir,
    add_device,
    add_encode_budget,
    add_timeout,
    rich_console,
)
from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.executors import EXECUTORS
from embedding_ttc.programs.catalog import REFERENCE_PROGRAM
from embedding_ttc.runs.config import ProposerSpec, RunConfig, RunLimits
from embedding_ttc.runs.records import OBJECTIVES
from embedding_ttc.runs.split import VALIDATION_SHARE, SplitSettings
from embedding_ttc.search.backends.catalog import BACKENDS
from embedding_ttc.search.limits import DEFAULT_MEMORY_GB
from embedding_ttc.search.strategies.base import Flag
from embedding_ttc.search.strategies.catalog import REGISTERED, get_strategy

if TYPE_CHECKING:  # the loop imports the evaluator and every program: not at parse time
    from embedding_ttc.search.open import SearchSetup

RENAMED = {"--proposer": "--strategy and --backend", "--llm-mode": "--strategy"}
"""Options of before 0.1.0 and what replaced them."""
DEFAULT_REFERENCE = REFERENCE_PROGRAM


def _limits(args: argparse.Namespace, recorded: RunConfig | None) -> RunLimits:
    """The sandbox's limits the options ask (:func:`~embedding_ttc.search.limits.run_limits`)."""
    from embedding_ttc.search.limits import run_limits

    return run_limits(
        recorded,
        timeout_seconds=args.timeout,
        encode_texts_per_item=args.encode_budget,
        memory_gb=args.memory_gb,
    )


def _config(
    args: argparse.Namespace,
    tasks: list[str],
    *,
    recorded: RunConfig | None = None,
) -> RunConfig:
    """The settings a run directory is tied to (a resume must match them).

    ``recorded`` is the run directory's configuration, if it has one: the limits not asked
    are taken from it (:func:`_limits`).

    Raises:
        ValueError: an objective against no reference, or validation tasks without a split.

    """
    validation_tasks = _validation_tasks(args)
    if validation_tasks and args.validation_share <= 0:
        raise ValueError("validation tasks need a split: --validation-share above 0")
    return RunConfig(
        suite=args.suite,
        tasks=tasks,
        encoder=args.encoder,
        proposer=_spec(args),
        model=_model_name(args),
        seed=args.seed,
        shortlist=args.shortlist,
        split=(
            SplitSettings(validation_share=args.validation_share, validation_tasks=validation_tasks)
            if args.validation_share > 0
            else None
        ),
        reference=_reference(args),
        objective=args.objective,
        limits=_limits(args, recorded),
    )


def _validation_tasks(args: argparse.Namespace) -> list[str]:
    """``--validation-task``, else the suite's validation tasks when the suite gives the tasks."""
    from embedding_ttc.tasks.catalog import suite_validation_tasks

    if args.validation_task:
        return list(args.validation_task)
    return [] if args.task else suite_validation_tasks(args.suite)


def _reference(args: argparse.Namespace) -> str | None:
    """The run's reference program (``--reference``; ``none``: no reference)."""
    return None if args.reference.lower() == "none" else str(args.reference)


def _model_name(args: argparse.Namespace) -> str | None:
    """The LLM the run uses, as recorded: ``--model``, else the local GGUF (named or default)."""
    if args.model:
        return str(args.model)
    if args.backend == "llama-cpp" and args.llm_model:
        return str(args.llm_model)
    from embedding_ttc.search.open import default_model

    return default_model(args.backend)


def strategy_flags() -> list[Flag]:
    """Every registered strategy's command-line options, each once (in registry order).

    Raises:
        ValueError: two strategies declaring one option differently.

    """
    seen: dict[str, Flag] = {}
    for strategy in REGISTERED:
        for flag in strategy.flags:
            if seen.setdefault(flag.option, flag) != flag:
                raise ValueError(f"{flag.option} is declared differently by two strategies")
    return list(seen.values())


def _dest(flag: Flag) -> str:
    return flag.option[2:].replace("-", "_")


def _strategy_name(args: argparse.Namespace) -> str:
    """``--strategy``, else ``draft`` over a backend, else ``structural``."""
    if args.strategy:
        return str(args.strategy)
    return "draft" if args.backend else "structural"


def _spec(args: argparse.Namespace) -> ProposerSpec:
    """The strategy and backend the options name, and the strategy's options from its flags.

    Raises:
        EmbeddingTTCError: a strategy not chosen on the command line, a backend it cannot
            take (or the lack of one it needs), or another strategy's option.
        StrategyError: an option out of its range.
        UnknownNameError: an unknown strategy or backend (with close names).

    """
    name = _strategy_name(args)
    strategy = get_strategy(name)
    if strategy.from_flags is None:
        raise EmbeddingTTCError(
            f"search: the {name} strategy's programs are handed over by a peer; it is opened "
            "with embedding_ttc.search.open.open_search, not on the command line"
        )
    backend = args.backend
    if backend is not None:
        BACKENDS.get(backend)  # an unknown name is refused with close ones
    if strategy.needs == "none" and backend is not None:
        raise EmbeddingTTCError(f"search: the {name} strategy takes no --backend")
    if strategy.needs != "none" and backend is None:
        raise EmbeddingTTCError(
            f"search: the {name} strategy needs a --backend ({', '.join(BACKENDS.names())})"
        )
    own = {flag.option for flag in strategy.flags}
    given: dict[str, object] = {}
    for flag in strategy_flags():
        value = getattr(args, _dest(flag))
        if value is None:
            continue
        if flag.option not in own:
            takers = [s.name for s in REGISTERED if flag in s.flags]
            raise EmbeddingTTCError(
                f"search: {flag.option} is an option of the {' and '.join(takers)} "
                f"strateg{'ies' if len(takers) > 1 else 'y'}, not of {name}"
            )
        given[flag.field] = value
    options = strategy.from_flags(given, backend)
    return ProposerSpec(strategy=name, backend=backend, options=strategy.write_options(options))


def _setup(args: argparse.Namespace) -> SearchSetup:
    """Where and how the run goes, as the options say."""
    from embedding_ttc.search.open import BackendSetup, SearchSetup

    return SearchSetup(
        run_dir=args.run_dir,
        data_dir=args.data_dir,
        cache_dir=args.cache_dir,
        use_cache=not args.no_cache,
        device=args.device,
        executor=args.executor,
        ray_address=args.ray_address,
        top_k=args.top_k,
        pick_rule=args.pick_rule,
        backend=BackendSetup(base_url=args.base_url, threads=args.llm_threads),
    )


def _run_config(args: argparse.Namespace, setup: SearchSetup) -> RunConfig:
    """The run's configuration as the options ask it, limits derived from the recorded run."""
    from embedding_ttc.runs.config import read_run_config
    from embedding_ttc.search.open import check_executor
    from embedding_ttc.tasks.catalog import suite_tasks

    check_executor(setup)  # before the run directory is read
    recorded = read_run_config(setup.run_dir)
    try:
        return _config(args, list(args.task or suite_tasks(args.suite)), recorded=recorded)
    except ValueError as exc:  # an objective against no reference, a limit that is not one
        raise EmbeddingTTCError(f"search: {exc}") from None


def cmd_search(args: argparse.Namespace) -> int:
    """Run or resume an agentic program search; print the frontier at the end."""
    from embedding_ttc.runs.frontier import Frontier, render_frontier
    from embedding_ttc.runs.records import LedgerRecord
    from embedding_ttc.search.loop import Budget, LoopEvents
    from embedding_ttc.search.open import open_search

    console = rich_console(highlight=False)

    def on_record(record: LedgerRecord, front: Frontier) -> None:
        best = front.best.mean_delta if front.best and front.best.mean_delta else 0.0
        if record.status == "ok":
            outcome = f"ok Δ={record.mean_delta:+.4f} c={record.cost_ratio:.2f}"
        else:
            outcome = f"{record.status.value}: {record.reason[:100]}"
        console.print(
            f"gen {record.generation}/{args.generations} · {record.program_id} {outcome} · "
            f"best {best:+.4f} · frontier {len(front.pareto)} · {record.seconds:.1f} s"
        )

    setup = _setup(args)
    config = _run_config(args, setup)
    with open_search(config, setup, say=console.print) as loop:
        front = loop.run(
            Budget(
                args.generations,
                wall_seconds=args.max_hours * 3600 if args.max_hours else None,
                llm_usd=args.max_usd,
            ),
            LoopEvents(on_record=on_record, on_stop=lambda why: console.print(f"stopped: {why}")),
        )
    print(render_frontier(front, len(loop.ledger.records)))
    return 0


class _Renamed(argparse.Action):
    """An option of before 0.1.0: refused, naming what replaced it."""

    def __init__(self, *args: Any, new: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.new = new

    def __call__(self, parser: Any, namespace: Any, values: Any, option: str | None = None) -> None:
        parser.error(
            f"{option} is gone: name {self.new} (e.g. --strategy edit --backend llama-cpp)"
        )


def _add_flag(parser: argparse.ArgumentParser, flag: Flag) -> None:
    """Add a strategy's option to the parser (``None`` when not given, whatever its kind)."""
    dest = _dest(flag)
    if flag.kind == "switch":
        parser.add_argument(
            flag.option, dest=dest, action=argparse.BooleanOptionalAction, help=flag.help
        )
    elif flag.kind == "list":
        parser.add_argument(
            flag.option, dest=dest, action="append", metavar=flag.metavar, help=flag.help
        )
    elif flag.kind == "choice":
        parser.add_argument(flag.option, dest=dest, choices=flag.choices, help=flag.help)
    else:
        parser.add_argument(
            flag.option,
            dest=dest,
            type=int if flag.kind == "int" else float,
            metavar=flag.metavar,
            help=flag.help,
        )


def add_search_commands(sub: Any) -> None:
    """Add ``search`` to the subcommand parser."""
    from embedding_ttc.encoders.catalog import DEFAULT_ENCODER

    se = sub.add_parser("search", help="agentic program search (propose, check, evaluate, record)")
    se.add_argument("--suite", default="discovery", help="the discovery suite (default discovery)")
    se.add_argument("--task", action="append", help="tasks instead of the suite; repeatable")
    se.add_argument(
        "--strategy",
        choices=[s.name for s in REGISTERED if s.from_flags is not None],
        help="how a program is written: structural (genomes of primitives, no LLM; the "
        "default without --backend), draft (a whole program per generation; the default with "
        "one), edit (search/replace edits of one parent, reading its lineage's lessons) or "
        "guided (a parent genome's next structural edit chosen as grammar-constrained JSON, "
        "llama-cpp or openai)",
    )
    se.add_argument(
        "--backend",
        help=f"the LLM that writes for draft, edit or guided: {', '.join(BACKENDS.names())}",
    )
    for old, new in RENAMED.items():
        se.add_argument(old, action=_Renamed, nargs="?", help=argparse.SUPPRESS, new=new)
    se.add_argument("--generations", type=int, default=20, help="last generation to run (G)")
    se.add_argument("--run-dir", type=Path, required=True, help="ledger and program sources")
    se.add_argument(
        "--encoder", default=DEFAULT_ENCODER, help=f"encoder name (default {DEFAULT_ENCODER})"
    )
    se.add_argument("--model", help="LLM model name (openai, anthropic)")
    se.add_argument("--base-url", help="OpenAI-compatible server URL (vLLM, Ollama, llama.cpp)")
    se.add_argument(
        "--llm-model",
        help="for --backend llama-cpp: a GGUF file, or a packaged model name "
        "(qwen2.5-coder-1.5b, the default; qwen2.5-coder-0.5b)",
    )
    se.add_argument(
        "--llm-threads",
        type=int,
        metavar="N",
        help="CPU threads of llama-cpp (default 1: faster than 2 on a busy two-core machine)",
    )
    for flag in strategy_flags():
        _add_flag(se, flag)
    se.add_argument(
        "--validation-share",
        type=float,
        default=VALIDATION_SHARE,
        metavar="F",
        help="share of each task's queries held out of the proposer's view, read by the "
        f"transfer admission rule (default {VALIDATION_SHARE}; 0: no split)",
    )
    se.add_argument(
        "--validation-task",
        action="append",
        metavar="NAME",
        help="a whole task held aside: evaluated, never shown to the proposer; repeatable "
        "(default: the suite's validation tasks, e.g. discovery-wide's four)",
    )
    se.add_argument(
        "--pick-rule",
        type=Path,
        metavar="FILE",
        help="the rule naming the run's one program (a pick-rule JSON; default: the library's "
        "rule), written into the run directory when the run starts and fixed after",
    )
    se.add_argument(
        "--reference",
        default=DEFAULT_REFERENCE,
        metavar="NAME",
        help="library program every candidate is also compared with "
        f"(default {DEFAULT_REFERENCE}, the hybrid a user already has; none: no reference)",
    )
    se.add_argument(
        "--objective",
        choices=OBJECTIVES,
        default="p0",
        help="the baseline of the Δ that guides the proposer and the admission (default p0)",
    )
    se.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the proposer, the parent choice and the validation split (default 0)",
    )
    se.add_argument("--top-k", type=int, default=5, help="frontier programs shown with source")
    add_timeout(se, resumed=True)
    add_encode_budget(se, resumed=True)
    se.add_argument(
        "--memory-gb",
        type=int,
        help=f"memory limit of a program (default {DEFAULT_MEMORY_GB}; a resumed run: as recorded)",
    )
    se.add_argument("--max-hours", type=float, help="wall-time budget")
    se.add_argument("--max-usd", type=float, help="LLM spending budget")
    se.add_argument("--shortlist", type=int, metavar="K", help="rerank first-stage top K only")
    se.add_argument(
        "--executor",
        default="inprocess",
        metavar="NAME",
        help=f"where candidates run on the tasks: {' or '.join(EXECUTORS)} (a generation's "
        "tasks as Ray tasks, the ray extra); the records are the same (default inprocess)",
    )
    se.add_argument(
        "--ray-address",
        help="a Ray cluster to run on with --executor ray (default: RAY_ADDRESS, else a local Ray)",
    )
    add_data_dir(se)
    add_cache_options(se)
    add_device(se)
    se.set_defaults(func=cmd_search)
