"""The ``evaluate`` command: thin wiring of evaluation.

``add_evaluate_commands`` also adds ``tasks`` and ``encoders`` (:mod:`embedding_ttc.cli.catalogs`)
and ``bench`` (:mod:`embedding_ttc.cli.bench`), in that order.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from embedding_ttc import __version__
from embedding_ttc.cli.bench import add_bench_command
from embedding_ttc.cli.catalogs import add_catalog_commands
from embedding_ttc.cli.common import (
    add_backend,
    add_cache_options,
    add_data_dir,
    add_device,
    add_encode_budget,
    add_timeout,
    add_tokenizer,
    build_encoder,
    command_line,
    print_listing,
    progress_bars,
    rich_console,
    with_backend,
)
from embedding_ttc.errors import EmbeddingTTCError


def _task_names(args: argparse.Namespace) -> list[str]:
    from embedding_ttc.tasks.catalog import suite_tasks

    names: list[str] = list(args.task or [])
    if args.suite:
        names += [t for t in suite_tasks(args.suite) if t not in names]
    if not names:
        raise EmbeddingTTCError("name at least one --task or a --suite")
    return names


def _evaluate_task(
    args: argparse.Namespace,
    enc_name: str,
    encoder: Any,
    task: Any,
    programs: list[Any],
    out: Any,
    progress: Any,
    guarded: Sequence[Any] = (),
    first_stage_run: Any = None,
    measures: Any = None,
) -> tuple[list[Any], list[Any]]:
    """Run the programs (P0 first) on one task; write each result as soon as it exists.

    ``guarded`` programs (program files in the sandbox) run after, one at a time: a failure
    becomes a :class:`FailureRow` with its status and reason instead of ending the command.
    ``first_stage_run`` (its ``.task`` is ``task``) and ``measures`` go to every program.
    """
    from embedding_ttc.evaluation.evaluate import run_programs
    from embedding_ttc.evaluation.guarded import ProgramFailure, run_guarded
    from embedding_ttc.evaluation.records import FailureRow, summary_row

    bar = None
    if progress is not None:
        bar = progress.add_task(f"{enc_name} · {task.name}", total=task.n_docs + task.n_queries)

    def advance(n: int) -> None:
        if progress is not None:
            progress.advance(bar, n)

    rows = []
    baseline: Any = None  # P0's result: programs start with P0 (cmd_evaluate puts it first)
    runs = run_programs(
        programs,
        task,
        encoder,
        progress=advance,
        shortlist=args.shortlist,
        first_stage=args.first_stage,
        first_stage_run=first_stage_run,
        measures=measures,
    )
    for run in runs:
        baseline = baseline or run.result
        row = summary_row(enc_name, task.name, run.result, baseline)
        if out:
            out.write(run, row)
        rows.append(row)
    failures = []
    outcomes = run_guarded(
        guarded,
        task,
        encoder,
        shortlist=args.shortlist,
        first_stage=args.first_stage,
        first_stage_run=first_stage_run,
        measures=measures,
    )
    for outcome in outcomes:
        if isinstance(outcome, ProgramFailure):
            failures.append(
                FailureRow(
                    encoder=enc_name,
                    task=task.name,
                    program=outcome.program,
                    status=outcome.status,
                    reason=outcome.reason,
                )
            )
            continue
        row = summary_row(enc_name, task.name, outcome.result, baseline)
        if out:
            out.write(outcome, row)
        rows.append(row)
    if progress is not None:
        progress.remove_task(bar)
    return rows, failures


def _first_stage_file(args: argparse.Namespace, tasks: list[str]) -> Any:
    """The run file of ``--first-stage-run``, read and checked (``None`` without one)."""
    if args.first_stage_run is None:
        if args.depth is not None:
            raise EmbeddingTTCError("--depth caps the candidates of a --first-stage-run; give one")
        return None
    if args.shortlist is not None:
        raise EmbeddingTTCError("--first-stage-run and --shortlist exclude each other")
    if len(tasks) != 1:
        raise EmbeddingTTCError(f"--first-stage-run is a run of one task; {len(tasks)} named")
    if args.depth is not None and args.depth < 1:
        raise EmbeddingTTCError(f"--depth must be positive, got {args.depth}")
    from embedding_ttc.evaluation.trec import read_run

    return read_run(args.first_stage_run)


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Evaluate programs on tasks; print a summary table or JSON records."""
    from embedding_ttc.evaluation.first_stage_run import first_stage_candidates
    from embedding_ttc.evaluation.measures import parse_measures
    from embedding_ttc.evaluation.output import RunDirectory, RunManifest, SandboxLimitsRecord
    from embedding_ttc.evaluation.records import FailureRow
    from embedding_ttc.programs.catalog import PROGRAMS, get_program, resolve_program_names
    from embedding_ttc.programs.outcome import Status
    from embedding_ttc.tasks.catalog import find_data_root, load_task_in, locate_task

    program_names = resolve_program_names(args.program)
    tasks = _task_names(args)
    measures = parse_measures(args.metrics) if args.metrics else None
    run_file = _first_stage_file(args, tasks)
    root = find_data_root(args.data_dir)  # found once: every task loads from it
    for name in tasks:  # a task that cannot be found fails before any encoding
        if not name.startswith(("mteb:", "irds:")):
            locate_task(name, root)
    programs = [get_program(n) for n in (["P0"] + [p for p in program_names if p != "P0"])]
    files: list[Any] = []
    failures: list[Any] = []
    sandbox_limits = None
    if args.program_file:
        from embedding_ttc.program_files.program_file import read_program_files
        from embedding_ttc.program_files.sandbox.limits import SandboxLimits
        from embedding_ttc.tasks.catalog import available_task_names

        # The task-universal check refuses task names in a program, the ones named here too.
        known = set(available_task_names(root)) | set(tasks)
        limits = SandboxLimits(wall_seconds=args.timeout, encode_texts_per_item=args.encode_budget)
        sandbox_limits = SandboxLimitsRecord(
            timeout_seconds=limits.wall_seconds,
            timeout_covers=limits.timeout_covers,
            encode_texts_per_item=limits.encode_texts_per_item,
        )
        read = read_program_files(
            args.program_file, task_names=known, taken=[*PROGRAMS, *program_names]
        )
        files = [f.sandboxed(limits) for f in read if f.rejected is None]
        rejected = [(f.name, f.rejected) for f in read if f.rejected is not None]
        program_names += [p.name for p in files]
        failures += [
            FailureRow(encoder=e, task=t, program=name, status=Status.REJECTED, reason=reason)
            for e in args.encoder
            for t in tasks
            for name, reason in rejected
        ]
    out = RunDirectory(args.out) if args.out else None
    if out:
        out.write_manifest(
            RunManifest(
                command=command_line(args),
                encoders=args.encoder,
                tasks=tasks,
                programs=program_names,
                data_dir=str(root) if args.data_dir else None,
                embedding_ttc=__version__,
                sandbox_limits=sandbox_limits,
            )
        )
    console = rich_console()
    # --json prints the records on stdout and, on stderr, nothing but errors.
    say = (lambda *a, **k: None) if args.json else console.print
    rows: list[Any] = []
    with progress_bars(not args.no_progress and not args.json) as progress:
        for enc_name in args.encoder:
            encoder = build_encoder(
                enc_name, args.cache_dir, args.no_cache, args.backend, args.device
            )
            label = with_backend(enc_name, args.backend)
            for task_name in tasks:
                task = load_task_in(task_name, root)
                candidates = None
                if run_file is not None:
                    candidates = first_stage_candidates(run_file, task, args.depth)
                    task = candidates.task  # the queries the run covers, with its warnings
                    fs = candidates.record
                    say(
                        f"{task_name}: every program reranks the candidates of {fs.path} "
                        f"(sha256 {fs.sha256[:12]}, depth {fs.depth or 'all'}) on "
                        f"{fs.covered_queries} queries"
                    )
                for w in task.warnings:
                    say(f"[yellow]{task_name}: {w}[/yellow]")
                done, failed = _evaluate_task(
                    args, label, encoder, task, programs, out, progress, files, candidates, measures
                )
                rows += [r for r in done if r.program in program_names]
                failures += failed
    for f in failures:
        console.print(f"[red]{f.program} on {f.task}: {f.status}: {f.reason}[/red]")
    _report(rows, failures, out, several_tasks=len(tasks) > 1, as_json=args.json)
    if failures:
        # After everything that succeeded is written and printed: a script can trust exit 0.
        where = f" and written to {args.out}" if args.out else ""
        written = f"; the {len(rows)} that succeeded are reported{where}" if rows else ""
        console.print(
            f"[red]evaluate: {len(failures)} of {len(rows) + len(failures)} requested program "
            f"runs failed{written}[/red]"
        )
        return 1
    return 0


def _report(
    rows: list[Any], failures: list[Any], out: Any, *, several_tasks: bool, as_json: bool
) -> None:
    """The results on stdout: JSON records, or the tables (the suite table saved under --out)."""
    if as_json:
        print(json.dumps([r.model_dump() for r in [*rows, *failures]], indent=2))
        if out and several_tasks:
            _discovery_tables(rows, out, None)
        return
    _print_table(rows)
    if several_tasks:
        _discovery_tables(rows, out, rich_console(stderr=False))


def _discovery_tables(rows: list[Any], out: Any, console: Any) -> None:
    """Print (unless ``console`` is ``None``; save under ``--out``) the Table-2 layout per encoder.

    The Markdown is printed unwrapped whatever the width, so its rows stay whole.
    """
    from embedding_ttc.evaluation.table import DiscoveryTable

    for encoder in dict.fromkeys(r.encoder for r in rows):
        table = DiscoveryTable.from_rows([r for r in rows if r.encoder == encoder])
        if console is not None:
            console.print(f"\n[bold]{encoder}[/bold] over {len(table.tasks)} tasks\n")
            console.print(table.to_markdown(), markup=False, highlight=False, soft_wrap=True)
        if out:
            out.write_table(encoder, table)


def _print_table(rows: Sequence[Any]) -> None:
    header = (
        *("encoder", "task", "program", "nDCG@10", "Δ", "W/T/L", "c", "index/query calls"),
        *("encode s", "algebra s", "total s"),
    )
    lines = [
        (
            r.encoder,
            r.task,
            r.program,
            f"{r.comparison.ndcg_at_10:.4f}",
            f"{r.comparison.delta_ndcg_at_10:+.4f}",
            str(r.comparison.wtl),
            f"{r.cost_ratio:.2f}",
            f"{r.index_calls}/{r.query_calls}",
            f"{r.encode_seconds:.1f}",
            f"{r.algebra_seconds:.2f}",
            f"{r.total_seconds:.1f}",
        )
        for r in rows
    ]
    caption = ""
    if rows:
        mean = sum(r.comparison.ndcg_at_10 for r in rows) / len(rows)
        caption = f"{len(rows)} results; mean nDCG@10 {mean:.4f}"
    print_listing(
        "nDCG@10 (Δ against P0, W/T/L over queries at ±0.001)",
        header,
        lines,
        whole=range(len(header)),
        caption=caption,
    )
    _print_measures(rows)


def _print_measures(rows: Sequence[Any]) -> None:
    """The extra measures of ``--metrics`` (pytrec_eval), one column each, beside nDCG@10."""
    metrics = list(dict.fromkeys(m for r in rows for m in r.metrics))
    if not metrics:
        return
    lines = [
        (
            r.encoder,
            r.task,
            r.program,
            f"{r.comparison.ndcg_at_10:.4f}",
            *(f"{r.metrics[m]:.4f}" if m in r.metrics else "–" for m in metrics),
        )
        for r in rows
    ]
    print()
    print_listing(
        "measures by pytrec_eval (the Δ and W/T/L above are on nDCG@10)",
        ("encoder", "task", "program", "nDCG@10", *metrics),
        lines,
        whole=range(4 + len(metrics)),
    )


def add_evaluate_commands(sub: Any) -> None:
    """Add ``evaluate``, ``tasks``, ``encoders`` and ``bench`` to the subcommand parsers."""
    from embedding_ttc.encoders.catalog import DEFAULT_ENCODER

    ev = sub.add_parser("evaluate", help="evaluate programs on tasks or a suite")
    ev.add_argument(
        "--encoder", action="append", help=f"encoder name (default {DEFAULT_ENCODER}); repeatable"
    )
    sel = ev.add_argument_group("tasks")
    sel.add_argument("--task", action="append", help="task name; repeatable")
    sel.add_argument("--suite", help="suite name (quickstart, smoke, discovery, heldout, scale)")
    ev.add_argument(
        "--program", action="append", help="program name, or 'all'; repeatable (default P0)"
    )
    ev.add_argument(
        "--program-file",
        action="append",
        type=Path,
        metavar="PATH",
        help="a program file (def program(Q, D, S, ctx)): checked, then run in the sandbox; "
        "repeatable",
    )
    add_timeout(ev)
    add_encode_budget(ev)
    add_data_dir(ev)
    add_tokenizer(ev)
    ev.add_argument(
        "--shortlist",
        type=int,
        metavar="K",
        help="rerank only each query's best K first-stage candidates (query batches)",
    )
    ev.add_argument(
        "--first-stage",
        choices=("dense", "bm25"),
        default="dense",
        help="first stage for --shortlist (default dense cosine)",
    )
    ev.add_argument(
        "--first-stage-run",
        type=Path,
        metavar="RUN",
        help="a TREC run file (qid Q0 docid rank score tag) of the one task named: every "
        "program, P0 included, reranks only each query's documents in it",
    )
    ev.add_argument(
        "--depth",
        type=int,
        metavar="K",
        help="with --first-stage-run: keep each query's best K run documents",
    )
    ev.add_argument(
        "--metrics",
        action="append",
        metavar="NAMES",
        help="extra measures beside nDCG@10, pytrec_eval names, comma-separated "
        "(e.g. ndcg_cut_10,recall_100,recip_rank,map); repeatable",
    )
    ev.add_argument("--out", type=Path, help="write per-query JSON and TREC run files here")
    ev.add_argument(
        "--json", action="store_true", help="print the summary records as JSON on stdout"
    )
    add_cache_options(ev)
    ev.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_backend(ev)
    add_device(ev)
    ev.set_defaults(func=cmd_evaluate)

    add_catalog_commands(sub)
    add_bench_command(sub)
