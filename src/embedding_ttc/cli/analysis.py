"""The ``transfer`` and ``report`` commands: thin wiring of the matrix, its store and report.

``embedding-ttc transfer --suite heldout --encoders A,B,C --programs P0,SoftCentroid --out DIR``
runs :func:`~embedding_ttc.analysis.transfer.run_transfer`: it computes the cells missing under
``DIR/cells`` (held-out suite × encoders × programs, plus the discovery suite on the first
encoder for the discovery column), then writes ``DIR/tables/<section>.{md,csv,tex}`` and
``DIR/tables/report.md``; the command prints its progress and the held-out table. Re-running
the same command computes only what is still missing. ``--search-run RUN`` records the search
the programs came from in ``DIR/transfer.json``; with it, ``frontier`` in ``--programs`` names
the programs that search admitted (``RUN/programs/<id>.py``), each run in the sandbox under its
program id. ``--program-file F`` (repeatable) adds a program file the same way, under its
stem; a program file that fails on a cell is reported with its status and the study goes on.
``--heads`` (or ``LearnedHead`` among the
programs) adds the learned-head baseline (App. C): each encoder's head is trained on the
discovery suite, or reused from ``DIR/heads/<encoder>.{json,npz}``, before the matrix runs.

``embedding-ttc report DIR [--search-run RUN]`` rereads the cells and writes the tables, the
figures (``DIR/figures``) and one self-contained page, ``DIR/report.html``
(:mod:`embedding_ttc.cli.report`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from embedding_ttc.cli.common import (
    add_backend,
    add_cache_options,
    add_data_dir,
    add_device,
    add_encode_budget,
    add_timeout,
    add_tokenizer,
    command_line,
)
from embedding_ttc.cli.report import add_report_command
from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.runs.frontier import RULES
from embedding_ttc.runs.records import OBJECTIVES


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
            f"{count} {event.key}  Δ={event.delta:+.4f}{sig}  "
            f"c={event.cost_ratio:.2f}  {event.total_seconds:.1f} s"
        )
    if isinstance(event, CellFailure):
        return f"{count} FAILED {event.key}: {event.status}: {event.reason}"
    return None


def _event_line(event: Any, no_progress: bool) -> str | None:
    """What the user reads of a transfer run's event (per-cell lines unless ``no_progress``)."""
    from embedding_ttc.analysis.heads import LEARNED_HEAD
    from embedding_ttc.analysis.matrix import MatrixProgress
    from embedding_ttc.analysis.transfer import (
        HeadReady,
        HeadTraining,
        MatrixPlanned,
        SearchProgramsChosen,
        TaskOutsideSuite,
    )

    if isinstance(event, TaskOutsideSuite):
        return f"embedding-ttc: note: task {event.task} is not in suite {event.suite}"
    if isinstance(event, SearchProgramsChosen):
        chosen = ", ".join(event.program_ids) or "none (no program was admitted)"
        return f"transfer: frontier of the search run {event.run}: {chosen}"
    if isinstance(event, HeadTraining):
        return f"heads: {event.encoder}: training on {event.n_tasks} discovery tasks"
    if isinstance(event, HeadReady):
        how = "reused" if event.reused else "trained"
        dropped = f", {event.dropped} stale {LEARNED_HEAD} cells dropped" if event.dropped else ""
        return (
            f"heads: {event.encoder}: {how} {event.record}; chosen {event.chosen} "
            f"(validation nDCG@10 {event.validation_ndcg_at_10:.4f}){dropped}"
        )
    if isinstance(event, MatrixPlanned):
        return (
            f"transfer: {event.planned} cells planned, {event.present} present, "
            f"{event.to_compute} to compute ({event.executor})"
            + (
                f", {event.stale} of them stored under another --shortlist, --sample-queries, "
                "program version or program source"
                if event.stale
                else ""
            )
        )
    if isinstance(event, MatrixProgress) and not no_progress:
        return _progress_line(event)
    return None


def _task_settings(args: argparse.Namespace) -> tuple[Any, Any]:
    """``--shortlist`` and ``--sample-queries``, parsed."""
    from embedding_ttc.analysis.plan import QuerySample, ShortlistPolicy

    try:
        shortlist = ShortlistPolicy.parse(args.shortlist or [])
        sample = QuerySample.parse(args.sample_queries or [])
    except ValueError as exc:
        raise EmbeddingTTCError(str(exc)) from None
    return shortlist, sample


def _selection(args: argparse.Namespace) -> Any:
    """Which admitted programs of ``--search-run`` 'frontier' names.

    Those of ``--rule`` against ``--objective`` (default: the objective the run was searched
    with, else P0).
    """
    from embedding_ttc.analysis.discovered import AdmittedBy
    from embedding_ttc.runs.config import read_run_config

    objective = args.objective
    if objective is None:
        recorded = read_run_config(args.search_run) if args.search_run is not None else None
        objective = recorded.objective if recorded is not None else "p0"
    return AdmittedBy(rule=args.rule, objective=objective)


def cmd_transfer(args: argparse.Namespace) -> int:
    """Compute the missing cells of the transfer matrix, write and print the tables."""
    from embedding_ttc.analysis.cells import BootstrapConfig
    from embedding_ttc.analysis.tables import heldout_markdown
    from embedding_ttc.analysis.transfer import TransferConfig, run_transfer
    from embedding_ttc.program_files.sandbox.limits import SandboxLimits

    shortlist, sample = _task_settings(args)
    config = TransferConfig(
        out=Path(args.out),
        encoders=tuple(split_names(args.encoders)),
        programs=tuple(split_names(args.programs)),
        program_files=tuple(args.program_file or ()),
        suite=args.suite,
        tasks=tuple(args.task or ()),
        discovery_suite=args.discovery_suite,
        discovery_only=args.discovery_only,
        oracle=tuple(split_names(args.oracle)) if args.oracle else None,
        heads=args.heads,
        head_seed=args.head_seed,
        search_run=args.search_run,
        select=_selection(args),
        program_limits=SandboxLimits(
            wall_seconds=args.timeout, encode_texts_per_item=args.encode_budget
        ),
        bootstrap=BootstrapConfig(resamples=args.bootstrap, seed=args.seed),
        shortlist=shortlist,
        sample=sample,
        executor=args.executor,
        ray_address=args.ray_address,
        data_dir=args.data_dir,
        cache_dir=args.cache_dir,
        use_cache=not args.no_cache,
        backend=args.backend,
        device=args.device,
        command=tuple(command_line(args)),
    )

    def show(event: Any) -> None:
        line = _event_line(event, args.no_progress)
        if line is not None:
            print(line, file=sys.stderr, flush=True)

    done = run_transfer(config, progress=show)
    print(heldout_markdown(done.report))
    m = done.matrix
    print(
        f"transfer: computed {len(m.computed)} cells in {done.seconds:.0f} s, "
        f"restatted {len(m.restatted)}, failed {len(m.failed)}; tables in {done.tables}",
        file=sys.stderr,
    )
    for failure in m.failed:
        print(f"  failed {failure.key}: {failure.status}: {failure.reason}", file=sys.stderr)
    if m.failed:
        # After every cell that succeeded is written: a script can trust exit 0.
        print(
            f"transfer: {len(m.failed)} of {len(m.computed) + len(m.failed)} cells this run "
            "tried failed (listed above); the others are written",
            file=sys.stderr,
        )
    if done.planned_missing:
        print(
            f"transfer: {len(done.report.missing)} cells missing; run the same command again to "
            "compute them",
            file=sys.stderr,
        )
    return 1 if m.failed or done.planned_missing else 0


def add_analysis_commands(sub: Any) -> None:
    """Add ``transfer`` and ``report`` to the subcommand parser."""
    from embedding_ttc.analysis.heads import LEARNED_HEAD
    from embedding_ttc.analysis.stats import DEFAULT_RESAMPLES
    from embedding_ttc.analysis.transfer import NO_DISCOVERY
    from embedding_ttc.executors import EXECUTORS

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
        help="comma list of programs, 'all' or a group (rocchio-grid); with --search-run, "
        "'frontier' is the programs that search admitted under --rule (without, the paper's "
        "twelve, which 'paper' always names); repeatable",
    )
    tr.add_argument(
        "--program-file",
        action="append",
        type=Path,
        metavar="PATH",
        help="a program file (def program(Q, D, S, ctx)), checked, then run in the sandbox on "
        "every cell under its file's stem; repeatable",
    )
    add_timeout(tr)
    add_encode_budget(tr)
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
        "transfer.json for `report` (kept from an earlier run when not given); 'frontier' in "
        "--programs evaluates its admitted programs",
    )
    tr.add_argument(
        "--rule",
        choices=tuple(RULES),
        default="compute",
        help="the admission rule whose programs 'frontier' names with --search-run: "
        + "; ".join(f"{name}: {what}" for name, what in RULES.items()),
    )
    tr.add_argument(
        "--objective",
        choices=OBJECTIVES,
        help="the baseline of the rule's Δ: p0 or the run's reference (default: the run's)",
    )
    tr.add_argument("--out", type=Path, required=True, help="cells and tables go here")
    tr.add_argument(
        "--executor",
        choices=EXECUTORS,
        default="inprocess",
        help="where cells are computed: inprocess (default) or ray (the ray extra)",
    )
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
    add_data_dir(tr)
    add_tokenizer(tr)
    add_cache_options(tr)
    add_backend(tr)
    add_device(tr)
    tr.add_argument("--no-progress", action="store_true", help="no per-cell progress lines")
    tr.set_defaults(func=cmd_transfer)

    add_report_command(sub)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the analysis commands alone (``python -m embedding_ttc.cli.analysis transfer ...``)."""
    parser = argparse.ArgumentParser(prog="embedding-ttc")
    sub = parser.add_subparsers(dest="command", required=True)
    add_analysis_commands(sub)
    from embedding_ttc.cli.common import run_command

    args = parser.parse_args(argv)
    args.argv = None if argv is None else list(argv)
    return run_command(args, "cells already written are complete")


if __name__ == "__main__":
    sys.exit(main())
