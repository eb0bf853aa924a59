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
from embedding_ttc.programs.catalog import REFERENCE_PROGRAM
from embedding_ttc.ray_runtime import EXECUTORS
from embedding_ttc.runs.config import ProposerSpec, RunConfig, RunLimits
from embedding_ttc.runs.records import OBJECTIVES
from embedding_ttc.runs.split import VALIDATION_SHARE, SplitSettings
from embedding_ttc.search.limits import DEFAULT_MEMORY_GB
from embedding_ttc.search.prompts import DEFAULT_CONTEXT_TOKENS, DEFAULT_EDIT_CONTEXT_TOKENS
from embedding_ttc.search.strategies.draft import API_DEFAULTS, LOCAL_DEFAULTS
from embedding_ttc.search.strategies.flags import LLM_MODES, ProposerFlags, resolve_spec
from embedding_ttc.search.strategies.guided import GUIDED_OFFERS

if TYPE_CHECKING:  # the loop imports the evaluator and every program: not at parse time
    from embedding_ttc.search.open import SearchSetup

DEFAULT_PROPOSER = "structural"
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
    peer: bool = False,
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
        proposer=_spec(args, peer=peer),
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
    if args.proposer == "llama-cpp" and args.llm_model:
        return str(args.llm_model)
    from embedding_ttc.search.open import default_model

    return default_model(args.proposer)


def _spec(args: argparse.Namespace, *, peer: bool = False) -> ProposerSpec:
    """The proposer the options name (:func:`~embedding_ttc.search.strategies.flags.resolve_spec`).

    ``peer``: a peer hands the programs over, and ``--proposer`` is its name.
    """
    flags = ProposerFlags(
        proposer=args.proposer,
        llm_mode=args.llm_mode,
        drafts=args.drafts,
        repair_rounds=args.repair_rounds,
        prompt=args.prompt,
        context_tokens=args.context_tokens,
        precheck=args.precheck,
        edit_ideas=args.edit_ideas,
        guided_offers=args.guided_offers,
        guided_keep=tuple(args.guided_keep),
        guided_share=args.guided_share,
    )
    return resolve_spec(flags, peer=peer)


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


def add_search_commands(sub: Any) -> None:
    """Add ``search`` to the subcommand parser."""
    from embedding_ttc.encoders.catalog import DEFAULT_ENCODER

    se = sub.add_parser("search", help="agentic program search (propose, check, evaluate, record)")
    se.add_argument("--suite", default="discovery", help="the discovery suite (default discovery)")
    se.add_argument("--task", action="append", help="tasks instead of the suite; repeatable")
    se.add_argument(
        "--proposer",
        default=DEFAULT_PROPOSER,
        help="structural (no LLM), openai, anthropic or llama-cpp",
    )
    se.add_argument("--generations", type=int, default=20, help="last generation to run (G)")
    se.add_argument("--run-dir", type=Path, required=True, help="ledger and program sources")
    se.add_argument(
        "--encoder", default=DEFAULT_ENCODER, help=f"encoder name (default {DEFAULT_ENCODER})"
    )
    se.add_argument("--model", help="LLM model name (openai, anthropic)")
    se.add_argument("--base-url", help="OpenAI-compatible server URL (vLLM, Ollama, llama.cpp)")
    se.add_argument(
        "--llm-model",
        help="for --proposer llama-cpp: a GGUF file, or a packaged model name "
        "(qwen2.5-coder-1.5b, the default; qwen2.5-coder-0.5b)",
    )
    se.add_argument(
        "--llm-threads",
        type=int,
        metavar="N",
        help="CPU threads of llama-cpp (default 1: faster than 2 on a busy two-core machine)",
    )
    se.add_argument(
        "--llm-mode",
        choices=LLM_MODES,
        default="draft",
        help="how an LLM proposer writes a program: draft it whole from a directive (default); "
        "edit one parent with search/replace blocks, reading its lineage's lessons; or "
        "guided: choose a parent genome's next structural edit as grammar-constrained JSON "
        "(llama-cpp, openai), which the structural proposer renders",
    )
    se.add_argument(
        "--drafts",
        type=int,
        metavar="N",
        help="drafts per generation, the first that passes the pre-check wins "
        f"(default {LOCAL_DEFAULTS.drafts} for llama-cpp, else {API_DEFAULTS.drafts})",
    )
    se.add_argument(
        "--repair-rounds",
        type=int,
        metavar="N",
        help="repair turns per failed draft: its error goes back to the model (default "
        f"{LOCAL_DEFAULTS.repair_rounds} for llama-cpp, else {API_DEFAULTS.repair_rounds})",
    )
    se.add_argument(
        "--prompt",
        choices=("full", "compact"),
        help="the full prompt, or the compact one with helpers, two examples and a directive "
        f"(default {LOCAL_DEFAULTS.prompt} for llama-cpp, else {API_DEFAULTS.prompt})",
    )
    se.add_argument(
        "--context-tokens",
        type=int,
        metavar="N",
        help=f"token budget of the compact prompt (default {DEFAULT_CONTEXT_TOKENS}) or of "
        f"the edit prompt (default {DEFAULT_EDIT_CONTEXT_TOKENS})",
    )
    se.add_argument(
        "--precheck",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="check each draft on a tiny synthetic task before the evaluation, after repairing "
        "its helper imports (on whenever drafting is: llama-cpp by default, or any drafting "
        "option); --no-precheck turns both off",
    )
    se.add_argument(
        "--edit-ideas",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="--llm-mode edit: name in each prompt one idea the parent lacks, to add as a "
        "channel (default on; --no-edit-ideas leaves the change to the model)",
    )
    se.add_argument(
        "--guided-offers",
        type=int,
        metavar="N",
        help="--llm-mode guided: offer a seeded sample of N open edits per generation, one of "
        f"each kind first (default {GUIDED_OFFERS}; 0: every open edit)",
    )
    se.add_argument(
        "--guided-keep",
        action="append",
        default=[],
        metavar="CHANNEL",
        help="--llm-mode guided: never drop or swap out this channel (repeatable; e.g. dense, "
        "the cosine S, anchors every program on the encoder's own ranking)",
    )
    se.add_argument(
        "--guided-share",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="--llm-mode guided: the reply also sets the convex fusion's share of the program "
        "it makes (default on for a new run; runs recorded before the option resume with "
        "--no-guided-share)",
    )
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
