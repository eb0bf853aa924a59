"""The ``transfer`` and ``report`` commands: thin wiring of the matrix, its store and report.

``embedding-ttc transfer --suite heldout --encoders A,B,C --programs P0,SoftCentroid --out DIR``
computes the cells missing under ``DIR/cells`` (held-out suite × encoders × programs, plus the
discovery suite on the first encoder for the discovery column), then writes
``DIR/tables/<section>.{md,csv,tex}`` and ``DIR/tables/report.md`` and prints the held-out
table. Re-running the same command computes only what is still missing. ``--search-run RUN``
records the search the programs came from in ``DIR/transfer.json``. ``--heads`` (or
``LearnedHead`` among the programs) adds the learned-head baseline (App. C): each encoder's head
is trained on the discovery suite, or reused from ``DIR/heads/<encoder>.{json,npz}``, before the
matrix runs.

``embedding-ttc report DIR [--search-run RUN]`` rereads the cells and writes the tables, the
figures (``DIR/figures``) and one self-contained page, ``DIR/report.html``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from embedding_ttc import __version__
from embedding_ttc.errors import EmbeddingTTCError

NO_DISCOVERY = "none"


def command_line(args: argparse.Namespace) -> list[str]:
    """The command as the user gave it, for manifests: ``main(argv)``'s words, else sys.argv."""
    words = getattr(args, "argv", None)
    return ["embedding-ttc", *(sys.argv[1:] if words is None else words)]


def split_names(values: Sequence[str] | None) -> list[str]:
    """Comma lists (repeatable) into names; ``Rocchio:K=3,beta=0.5`` stays one name.

    A piece ``k=v`` with no ``:`` continues the parametrised name before it.
    """
    out: list[str] = []
    for value in values or []:
        for piece in (p.strip() for p in value.split(",")):
            if not piece:
                continue
            if "=" in piece and ":" not in piece and out and ":" in out[-1]:
                out[-1] += "," + piece
            else:
                out.append(piece)
    return out


def _heldout_tasks(suite: str, tasks: Sequence[str] | None) -> list[str]:
    from embedding_ttc.tasks.catalog import suite_tasks

    in_suite = suite_tasks(suite)
    if not tasks:
        return in_suite
    for t in tasks:
        if t not in in_suite:
            print(f"embedding-ttc: note: task {t} is not in suite {suite}", file=sys.stderr)
    return list(dict.fromkeys(tasks))


def _progress_line(update: Any) -> str | None:
    from embedding_ttc.analysis.cells import Cell
    from embedding_ttc.analysis.groups import CellFailure, GroupStarted

    event = update.event
    width = len(str(update.total))
    count = f"[{update.done:>{width}}/{update.total}]"
    if isinstance(event, GroupStarted):
        job = event.job
        return (
            f"{count} {job.encoder} · {job.task}: encoding {event.n_texts} texts, "
            f"then {len(job.programs)} cell(s)"
        )
    if isinstance(event, Cell):
        sig = " *" if event.bootstrap.significant_win or event.bootstrap.significant_loss else ""
        return (
            f"{count} {event.key}  Δ={event.delta_ndcg_at_10:+.4f}{sig}  "
            f"c={event.cost_ratio:.2f}  {event.total_seconds:.1f} s"
        )
    if isinstance(event, CellFailure):
        return f"{count} FAILED {event.key}: {event.reason}"
    return None


def cmd_transfer(args: argparse.Namespace) -> int:
    """Compute the missing cells of the transfer matrix, write and print the tables."""
    from embedding_ttc.analysis.cells import BootstrapConfig, CellStore
    from embedding_ttc.analysis.executors import make_executor
    from embedding_ttc.analysis.groups import CellFailure, MatrixEnvironment
    from embedding_ttc.analysis.heads import LEARNED_HEAD
    from embedding_ttc.analysis.matrix import run_matrix
    from embedding_ttc.analysis.plan import plan
    from embedding_ttc.analysis.staleness import to_compute
    from embedding_ttc.analysis.tables import heldout_markdown, write_tables
    from embedding_ttc.analysis.transfer_report import TransferReport, default_oracle
    from embedding_ttc.programs.catalog import resolve_program_names
    from embedding_ttc.tasks.catalog import resolve_data_root, suite_tasks

    encoders = split_names(args.encoders)
    if not encoders:
        raise EmbeddingTTCError("name at least one encoder with --encoders A,B,C")
    asked = split_names(args.programs)
    heads = args.heads or LEARNED_HEAD in asked
    programs = resolve_program_names([p for p in asked if p != LEARNED_HEAD])
    oracle = (
        resolve_program_names(split_names(args.oracle)) if args.oracle else default_oracle(programs)
    )
    if heads:
        programs.append(LEARNED_HEAD)
    tasks = _heldout_tasks(args.suite, args.task)
    discovery = args.discovery_suite
    disc_tasks = suite_tasks(discovery) if discovery and discovery != NO_DISCOVERY else []
    if heads and not disc_tasks:
        _check_stored_heads(Path(args.out), encoders, discovery, args.head_seed)
    disc_encoder = encoders[0] if disc_tasks else None
    data_root = resolve_data_root(args.data_dir)
    config = BootstrapConfig(resamples=args.bootstrap, seed=args.seed)
    shortlist, sample = _task_settings(args, [*tasks, *disc_tasks])

    if args.discovery_only and disc_encoder is None:
        raise EmbeddingTTCError(
            f"--discovery-only computes the discovery column; --discovery-suite {discovery} "
            "has none"
        )
    column = plan([disc_encoder], disc_tasks, programs) if disc_encoder else plan([], [], [])
    study = plan(encoders, tasks, programs) + column  # what the tables lay out
    the_plan = column if args.discovery_only else study  # what this run computes
    out = Path(args.out)
    store = CellStore(out)
    _write_manifest(out, args, encoders, tasks, disc_tasks, programs, config, shortlist, sample)
    env = MatrixEnvironment(
        data_root=data_root,
        cache_dir=args.cache_dir,
        backend=args.backend,
        use_cache=not args.no_cache,
        heads_root=out if heads else None,
    )
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    run_start = time.perf_counter()
    absent, stale_keys = to_compute(the_plan, store, shortlist, sample=sample)
    if heads and _prepare_heads(
        the_plan, [*absent, *stale_keys], store, env, disc_tasks, args.head_seed
    ):  # a retrained head dropped its stale cells: they are to compute now
        absent, stale_keys = to_compute(the_plan, store, shortlist, sample=sample)
    stale = len(stale_keys)
    missing = len(absent) + stale
    print(
        f"transfer: {len(the_plan)} cells planned, {len(the_plan) - missing} present, "
        f"{missing} to compute ({args.executor})"
        + (
            f", {stale} of them stored under another --shortlist, --sample-queries or program "
            "version"
            if stale
            else ""
        ),
        file=sys.stderr,
        flush=True,
    )

    tally = {"computed": 0, "failed": 0}  # what the run log counts, should the run be cut short

    def progress(update: Any) -> None:
        tally["failed"] += isinstance(update.event, CellFailure)
        tally["computed"] = update.done - tally["failed"]  # done: cells written or failed
        line = _progress_line(update)
        if line and not args.no_progress:
            print(line, file=sys.stderr, flush=True)

    start = time.perf_counter()
    status = "error"
    try:
        outcome = run_matrix(
            the_plan,
            store,
            make_executor(args.executor, address=args.ray_address),
            progress,
            env=env,
            bootstrap=config,
            shortlist=shortlist,
            sample=sample,
        )
        status = "complete" if outcome.complete else "incomplete"
    except KeyboardInterrupt:
        status = "interrupted"
        raise
    finally:
        wall_run = time.perf_counter() - run_start
        _log_run(
            out, args, started, wall_run, status, len(the_plan), len(the_plan) - missing, tally
        )
    wall = time.perf_counter() - start
    report = TransferReport.from_cells(
        store.present(study),
        encoders=encoders,
        tasks=tasks,
        programs=programs,
        discovery_encoder=disc_encoder,
        discovery_tasks=disc_tasks,
        oracle_programs=oracle,
    )
    write_tables(out / "tables", report)
    print(heldout_markdown(report))
    print(
        f"transfer: computed {len(outcome.computed)} cells in {wall:.0f} s, "
        f"restatted {len(outcome.restatted)}, failed {len(outcome.failed)}; "
        f"tables in {out / 'tables'}",
        file=sys.stderr,
    )
    for failure in outcome.failed:
        print(f"  failed {failure.key}: {failure.reason}", file=sys.stderr)
    planned = set(the_plan)
    if any(k in planned for k in report.missing):
        print(
            f"transfer: {len(report.missing)} cells missing; run the same command again to "
            "compute them",
            file=sys.stderr,
        )
        return 1
    return 0


def _log_run(
    out: Path,
    args: argparse.Namespace,
    started: str,
    wall: float,
    status: str,
    planned: int,
    already: int,
    tally: dict[str, int],
) -> None:
    """Append this run to ``OUT/runs.jsonl`` (:mod:`embedding_ttc.analysis.run_log`)."""
    from embedding_ttc.analysis.run_log import TransferRun, append_run

    run = TransferRun(
        command=command_line(args),
        started_at=started,
        wall_seconds=round(wall, 3),
        status=status,  # type: ignore[arg-type]
        planned=planned,
        computed=tally["computed"],
        failed=tally["failed"],
        already=already,
        executor=args.executor,
        embedding_ttc=__version__,
        cpus=os.cpu_count(),
    )
    append_run(out, run)


def _task_settings(args: argparse.Namespace, tasks: list[str]) -> tuple[Any, Any]:
    """``--shortlist`` and ``--sample-queries``, parsed and checked against the matrix's tasks."""
    from embedding_ttc.analysis.plan import QuerySample, ShortlistPolicy

    try:
        shortlist = ShortlistPolicy.parse(args.shortlist or [])
        sample = QuerySample.parse(args.sample_queries or [])
    except ValueError as exc:
        raise EmbeddingTTCError(str(exc)) from None
    for setting in (shortlist, sample):
        unknown = [t for t, _ in setting.per_task if t not in tasks]
        if unknown:
            raise EmbeddingTTCError(
                f"{setting.option} names tasks outside the matrix: {', '.join(unknown)}; its "
                f"tasks: {', '.join(tasks)}"
            )
    return shortlist, sample


def _check_stored_heads(out: Path, encoders: list[str], discovery: str, seed: int) -> None:
    """Without discovery tasks, LearnedHead cells need every encoder's heads already stored."""
    from embedding_ttc.analysis.head_store import HeadStore
    from embedding_ttc.analysis.heads import LEARNED_HEAD, HeadConfig

    store = HeadStore(out)
    lacking = [e for e in encoders if store.matching_record(e, HeadConfig(seed=seed)) is None]
    if lacking:
        raise EmbeddingTTCError(
            f"{LEARNED_HEAD} trains on the discovery suite; --discovery-suite {discovery} "
            f"leaves nothing to train on, and {store.dir} holds no head (seed {seed}) for "
            f"{', '.join(lacking)}"
        )


def _prepare_heads(
    the_plan: Any, compute: Any, store: Any, env: Any, disc_tasks: list[str], seed: int
) -> bool:
    """Train (or reuse) the learned head of every encoder with LearnedHead cells; say which.

    Returns whether a retrained head dropped stale cells.

    Without discovery tasks (``--discovery-suite none``) the stored heads are reused, whatever
    tasks they were trained on (:func:`_check_stored_heads` made sure they exist).
    """
    from embedding_ttc.analysis.head_store import HeadStore, prepare_heads
    from embedding_ttc.analysis.heads import LEARNED_HEAD, HeadConfig, embed_tasks

    def data(encoder: str) -> Any:
        print(f"heads: {encoder}: training on {len(disc_tasks)} discovery tasks", file=sys.stderr)
        return embed_tasks(env.encoder(encoder), [env.task(t) for t in disc_tasks])

    heads = HeadStore(env.heads_root)
    tasks = disc_tasks or None
    dropped_any = False
    config = HeadConfig(seed=seed)
    for done in prepare_heads(the_plan, store, heads, config, data, tasks, compute):
        r = done.record
        dropped_any = dropped_any or bool(done.dropped)
        chosen = r.family(r.chosen)
        val = chosen.validation_ndcg_at_10 if chosen is not None else float("nan")
        how = "reused" if done.reused else "trained"
        dropped = (
            f", {len(done.dropped)} stale {LEARNED_HEAD} cells dropped" if done.dropped else ""
        )
        print(
            f"heads: {done.encoder}: {how} {heads.record_path(done.encoder)}; chosen {r.chosen} "
            f"(validation nDCG@10 {val:.4f}){dropped}",
            file=sys.stderr,
            flush=True,
        )
    return dropped_any


def _write_manifest(
    out: Path,
    args: argparse.Namespace,
    encoders: list[str],
    tasks: list[str],
    disc_tasks: list[str],
    programs: list[str],
    config: Any,
    shortlist: Any,
    sample: Any,
) -> None:
    from embedding_ttc.analysis.cells import CELL_SCHEMA_VERSION
    from embedding_ttc.durable import write_atomic

    out.mkdir(parents=True, exist_ok=True)
    discovery = {
        "discovery_suite": args.discovery_suite,
        "discovery_tasks": disc_tasks,
        "discovery_encoder": encoders[0] if disc_tasks else None,
    }
    if not disc_tasks:  # a held-out piece keeps the column an earlier run laid out
        discovery = _earlier_discovery(out) or discovery
    body = {
        "schema_version": CELL_SCHEMA_VERSION,
        "kind": "transfer_manifest",
        "command": command_line(args),
        "suite": args.suite,
        "tasks": tasks,
        **discovery,
        "encoders": encoders,
        "programs": programs,
        "bootstrap": config.resamples,
        "shortlist": shortlist.describe(),
        "sample_queries": sample.describe(),
        "seed": config.seed,
        "executor": args.executor,
        "embedding_ttc": __version__,
        "search_run": _search_run_entry(out, getattr(args, "search_run", None)),
    }
    write_atomic(out / "transfer.json", json.dumps(body, indent=2) + "\n")


def _earlier_discovery(out: Path) -> dict[str, Any] | None:
    """The discovery column of the manifest already in ``out``, if it has one.

    A study run in pieces has held-out pieces with ``--discovery-suite none``; the manifest
    they write keeps the column of the run that laid it out, so ``report`` still shows it.
    """
    from embedding_ttc.analysis.inputs import ReportError, read_manifest

    try:
        earlier = read_manifest(out)
    except ReportError:
        return None
    if not earlier or not earlier.get("discovery_tasks"):
        return None
    encoders = earlier.get("encoders") or [None]
    return {
        "discovery_suite": earlier.get("discovery_suite"),
        "discovery_tasks": earlier["discovery_tasks"],
        "discovery_encoder": earlier.get("discovery_encoder") or encoders[0],
    }


def _search_run_entry(out: Path, given: Path | None) -> str | None:
    """The search run the manifest records: ``--search-run`` (checked), else the previous one.

    A run without ``--search-run`` keeps the one an earlier run of the same matrix recorded, so
    a matrix computed in phases still knows its search. The path is recorded relative to ``out``
    (where it can be), so a matrix and its search run moved or cloned together stay linked.
    """
    from embedding_ttc.analysis.inputs import load_search_run, read_manifest

    if given is not None:
        load_search_run(given)  # a missing or malformed ledger fails before any cell is computed
        try:
            return os.path.relpath(given.resolve(), out.resolve())
        except ValueError:  # another drive (Windows): no relative path
            return str(given.resolve())
    try:
        previous = read_manifest(out)
    except EmbeddingTTCError:
        return None
    recorded = (previous or {}).get("search_run")
    return str(recorded) if recorded else None


def cmd_report(args: argparse.Namespace) -> int:
    """Write the tables, the figures and ``DIR/report.html`` of a transfer matrix."""
    from embedding_ttc.analysis.report import write_report
    from embedding_ttc.analysis.report_page import build_page

    page = build_page(
        args.dir,
        search_run=args.search_run,
        program=args.program,
        prf_task=args.prf_task,
        seed=args.seed,
    )
    files = write_report(page)
    r = page.report
    print(
        f"report: {len(r.encoders)} encoders × {len(r.tasks)} held-out tasks × "
        f"{len(r.programs)} programs; {len(r.cells)} cells present, {len(r.missing)} missing",
        file=sys.stderr,
    )
    print(f"report: figures drawn: {', '.join(files.drawn) or 'none'}", file=sys.stderr)
    for skipped in files.skipped:
        print(f"report: not drawn: {skipped.figure}: {skipped.reason}", file=sys.stderr)
    print(f"report: tables in {files.tables}, figures in {args.dir / 'figures'}", file=sys.stderr)
    print(files.html)
    return 0


def add_analysis_commands(sub: Any) -> None:
    """Add ``transfer`` and ``report`` to the subcommand parser."""
    from embedding_ttc.analysis.executors import EXECUTORS
    from embedding_ttc.analysis.heads import LEARNED_HEAD
    from embedding_ttc.analysis.stats import DEFAULT_RESAMPLES
    from embedding_ttc.encoders.catalog import BACKENDS

    tr = sub.add_parser(
        "transfer",
        help="transfer matrix: programs × encoders × held-out tasks, with bootstrap tables",
    )
    tr.add_argument("--suite", default="heldout", help="the held-out suite (default heldout)")
    tr.add_argument("--task", action="append", help="only these held-out tasks; repeatable")
    tr.add_argument(
        "--encoders",
        action="append",
        required=True,
        help="comma list of encoders; the first is the discovery encoder",
    )
    tr.add_argument(
        "--programs",
        action="append",
        required=True,
        help="comma list of programs, 'all' or a group (rocchio-grid); repeatable",
    )
    tr.add_argument(
        "--discovery-suite",
        default="discovery",
        help=f"suite of the discovery column, on the first encoder ('{NO_DISCOVERY}': no column)",
    )
    tr.add_argument(
        "--discovery-only",
        action="store_true",
        help="compute only the discovery column's cells (a piece of a study run in pieces)",
    )
    tr.add_argument(
        "--oracle",
        action="append",
        help="the oracle's program set (default: the frontier group's programs in the matrix, "
        "else all)",
    )
    tr.add_argument(
        "--heads",
        action="store_true",
        help=f"add the learned-head baseline ({LEARNED_HEAD}; also by naming it in --programs): "
        "per encoder, heads trained on the discovery suite (or reused from OUT/heads)",
    )
    tr.add_argument(
        "--head-seed", type=int, default=0, help="seed of the heads' split and training"
    )
    tr.add_argument(
        "--search-run",
        type=Path,
        metavar="RUN",
        help="the search run the programs came from (its ledger.jsonl); recorded in "
        "transfer.json for `report` (kept from an earlier run when not given)",
    )
    tr.add_argument("--out", type=Path, required=True, help="cells and tables go here")
    tr.add_argument("--executor", choices=EXECUTORS, default="inprocess")
    tr.add_argument(
        "--ray-address",
        help="a Ray cluster to run on with --executor ray (default: RAY_ADDRESS, else a local Ray)",
    )
    tr.add_argument(
        "--bootstrap",
        type=int,
        default=DEFAULT_RESAMPLES,
        metavar="B",
        help=f"paired-bootstrap resamples per cell (default {DEFAULT_RESAMPLES})",
    )
    tr.add_argument("--seed", type=int, default=0, help="base seed of the bootstrap")
    tr.add_argument(
        "--shortlist",
        action="append",
        metavar="K|TASK=K",
        help="rerank each query's K best dense first-stage candidates instead of the whole "
        "corpus, on every task (K) or on one task (TASK=K); repeatable. Cells record it, and "
        "cells stored under another setting are recomputed",
    )
    tr.add_argument(
        "--sample-queries",
        action="append",
        metavar="N|TASK=N",
        help="score a seeded sample of N queries (the same for every encoder, program and run) "
        "instead of all, on every task (N) or on one task (TASK=N); repeatable. Cells record "
        "it, and cells stored under another setting are recomputed",
    )
    tr.add_argument("--data-dir", type=Path)
    tr.add_argument("--cache-dir", type=Path)
    tr.add_argument("--no-cache", action="store_true")
    tr.add_argument("--backend", choices=BACKENDS, default="torch")
    tr.add_argument("--no-progress", action="store_true", help="no per-cell progress lines")
    tr.set_defaults(func=cmd_transfer)

    add_report_command(sub)


def add_report_command(sub: Any) -> None:
    """Add ``report`` to the subcommand parser."""
    from embedding_ttc.analysis.figure_data.prf import DEFAULT_PRF_TASK
    from embedding_ttc.analysis.figure_data.transfer import DEFAULT_PROGRAM

    rp = sub.add_parser(
        "report",
        help="one self-contained HTML page (figures and tables) over a transfer matrix",
    )
    rp.add_argument("dir", type=Path, metavar="DIR", help="the matrix directory (transfer --out)")
    rp.add_argument(
        "--search-run",
        type=Path,
        metavar="RUN",
        help="search run of the Pareto and trajectory figures (default: the one transfer.json "
        "records)",
    )
    rp.add_argument(
        "--program",
        help=f"program of the per-encoder bars (default {DEFAULT_PROGRAM} when in the matrix)",
    )
    rp.add_argument(
        "--prf-task",
        default=DEFAULT_PRF_TASK,
        help=f"task of the Rocchio-against-SoftCentroid bars (default {DEFAULT_PRF_TASK})",
    )
    rp.add_argument("--seed", type=int, default=0, help="seed of the trajectory's UMAP layout")
    rp.set_defaults(func=cmd_report)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the analysis commands alone (``python -m embedding_ttc.cli_analysis transfer ...``)."""
    parser = argparse.ArgumentParser(prog="embedding-ttc")
    sub = parser.add_subparsers(dest="command", required=True)
    add_analysis_commands(sub)
    from embedding_ttc.cli import run_command

    args = parser.parse_args(argv)
    args.argv = None if argv is None else list(argv)
    return run_command(args, "cells already written are complete")


if __name__ == "__main__":
    sys.exit(main())
