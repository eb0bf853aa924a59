"""A weak local code LLM in the search: four proposer configurations side by side.

Each configuration runs the search loop for G generations with the same seed, the same tasks,
the same encoder and the same local model (Qwen2.5-Coder via llama-cpp), each in its own run
directory ``RUN_DIR/<config>``:

* ``bare``: the full prompt, one draft, no pre-check (the ``llama-cpp`` proposer as is);
* ``compact``: + the compact prompt with helpers, two worked examples and a directive;
* ``precheck-repair``: + the mechanical import repair, the pre-check on a synthetic task and
  one repair turn;
* ``best-of-3``: + up to three drafts per generation.

The generations are interleaved (generation 1 of every configuration, then generation 2 ...),
so a run cut short still compares the configurations at equal depth, and every number is read
back from the ledgers: re-running resumes where each ledger stops, and ``--report`` only
prints the table. One row per configuration: the fraction of generations that yielded a valid,
novel, evaluated program (status ``ok``), the count of each failure status, the mean seconds
per generation split into LLM time (every call, failed drafts included) and the rest
(pre-checks and the evaluation), mean tokens in/out per generation, and mean failed
attempts per generation.

Run (a few minutes per generation and configuration on two busy cores)::

    .venv/bin/python benchmarks/llm_proposer.py --task aila_statutes --task financebench \\
        --generations 5 --encoder all-MiniLM-L6-v2 --run-dir /work/runs/llm-bench

The evaluations take no compute lock (the LLM, which dominates, runs outside it anyway), so
another search on the machine slows this one down rather than blocking it. The last line is
machine-readable: ``ok_fraction=`` per configuration.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.ledger import Ledger
from embedding_ttc.runs.records import LedgerRecord


@dataclass(frozen=True)
class Config:
    """One proposer configuration."""

    name: str
    prompt: Literal["full", "compact"] | None  # None: the bare proposer, no wrapper
    drafts: int = 1
    repair_rounds: int = 0
    precheck: bool = False


CONFIGS: tuple[Config, ...] = (
    Config("bare", prompt=None),
    Config("compact", prompt="compact"),
    Config("precheck-repair", prompt="compact", repair_rounds=1, precheck=True),
    Config("best-of-3", prompt="compact", drafts=3, repair_rounds=1, precheck=True),
)

FAILURES = (
    Status.REJECTED,
    Status.TIMEOUT,
    Status.MEMORY,
    Status.CRASHED,
    Status.INVALID_OUTPUT,
    Status.PROPOSER_ERROR,
)


def _log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def build_loops(args: argparse.Namespace, configs: list[Config]) -> dict[str, Any]:
    """One search loop per configuration, sharing the tasks, encoder, evaluator and model."""
    from embedding_ttc.cli.common import build_encoder
    from embedding_ttc.program_files.checks.source import check_source
    from embedding_ttc.program_files.sandbox.limits import SandboxLimits
    from embedding_ttc.program_files.sandbox.program import SandboxedProgram
    from embedding_ttc.runs.config import ProposerSpec, RunConfig, write_run_config
    from embedding_ttc.search.backends.llama_cpp import LlamaCppBackend
    from embedding_ttc.search.evaluator import SuiteEvaluator
    from embedding_ttc.search.loop import SearchLoop
    from embedding_ttc.search.novelty import library_structures
    from embedding_ttc.search.precheck.check import ledger_precheck
    from embedding_ttc.search.strategies import Collaborators, build_proposer, get_strategy
    from embedding_ttc.search.strategies.draft import DraftOptions
    from embedding_ttc.tasks.catalog import (
        available_task_names,
        load_task,
        resolve_data_root,
        suite_tasks,
    )

    root = resolve_data_root(args.data_dir)
    names = list(args.task or suite_tasks(args.suite))
    tasks = [load_task(n, root) for n in names]
    encoder = build_encoder(args.encoder, args.cache_dir, False)
    evaluator = SuiteEvaluator(tasks, encoder)
    known = set(available_task_names(root)) | set(names)
    limits = SandboxLimits(wall_seconds=args.timeout, memory_bytes=args.memory_gb * 2**30)
    library = library_structures()

    def checker(source: str) -> object:
        return check_source(source, task_names=known)

    def llm() -> LlamaCppBackend:
        return LlamaCppBackend(
            args.llm_model,
            n_ctx=args.n_ctx,
            n_threads=args.llm_threads,
            max_tokens=args.max_tokens,
            seed=args.seed,
        )

    # Two model instances: the bare full prompt would evict the compact prompts' shared head
    # from llama.cpp's KV cache at every switch; the compact configurations share one.
    bare_llm = llm() if any(c.prompt is None for c in configs) else None
    compact_llm = llm() if any(c.prompt is not None for c in configs) else None
    loops: dict[str, Any] = {}
    for config in configs:
        ledger = Ledger(args.run_dir / config.name)
        options = DraftOptions()  # the bare full prompt: the single draft
        if config.prompt is not None:
            options = DraftOptions(
                drafts=config.drafts,
                repair_rounds=config.repair_rounds,
                prompt=config.prompt,
                context_tokens=args.context_tokens,
                precheck=config.precheck,
            )
        spec = ProposerSpec(
            strategy="draft",
            backend="llama-cpp",
            options=get_strategy("draft").write_options(options),
        )
        # The run directory's configuration, as `search` records it: the configuration's name
        # is the directory's, its draft options are recorded, the local model is the model.
        write_run_config(
            ledger.run_dir,
            RunConfig(
                suite=args.suite,
                tasks=names,
                encoder=args.encoder,
                proposer=spec,
                model=args.llm_model,
                seed=args.seed,
                shortlist=None,
            ),
        )
        check = ledger_precheck(checker, library, ledger, limits, encoder)
        backend = bare_llm if options.single else compact_llm
        given = Collaborators(seed=args.seed, precheck=check)
        proposer = build_proposer(spec, backend, given)
        loops[config.name] = SearchLoop(
            proposer=proposer,
            checker=checker,
            sandbox=lambda source, pid: SandboxedProgram(source, pid, limits),
            evaluator=evaluator,
            ledger=ledger,
            seed=args.seed,
            top_k=args.top_k,
            registered=library,
        )
    return loops


def run(args: argparse.Namespace, configs: list[Config]) -> None:
    """Interleave the configurations' generations until each reaches ``--generations``."""
    from embedding_ttc.runs.frontier import Frontier
    from embedding_ttc.search.loop import Budget, LoopEvents

    loops = build_loops(args, configs)
    for generation in range(1, args.generations + 1):
        for config in configs:

            def on_record(record: LedgerRecord, _: Frontier, name: str = config.name) -> None:
                if record.status == Status.OK:
                    outcome = f"ok Δ={record.mean_delta:+.4f} c={record.cost_ratio:.2f}"
                else:
                    outcome = f"{record.status.value}: {record.reason[:120]!r}"
                _log(
                    f"{name} gen {record.generation}: {outcome} · llm {record.llm_seconds:.0f} s"
                    f" · total {record.seconds:.0f} s · {len(record.attempts)} failed attempts"
                )

            loops[config.name].run(Budget(generation), LoopEvents(on_record=on_record))


@dataclass(frozen=True)
class Row:
    """One configuration's numbers, read from its ledger."""

    name: str
    generations: int
    ok: int
    failures: Counter[str]
    llm_seconds: float
    other_seconds: float
    tokens_in: float
    tokens_out: float
    attempts: float
    best_delta: float | None


def summarise(name: str, records: tuple[LedgerRecord, ...], generations: int) -> Row:
    """The row of one configuration over generations 1..``generations`` of its ledger."""
    gens = [r for r in records if 1 <= r.generation <= generations]
    n = len(gens)

    def mean(values: list[float]) -> float:
        return sum(values) / n if n else 0.0

    ok = [r for r in gens if r.status == Status.OK]
    deltas = [r.mean_delta for r in ok if r.mean_delta is not None]
    return Row(
        name=name,
        generations=n,
        ok=len(ok),
        failures=Counter(r.status.value for r in gens if r.status != Status.OK),
        llm_seconds=mean([r.llm_seconds for r in gens]),
        other_seconds=mean([max(r.seconds - r.llm_seconds, 0.0) for r in gens]),
        tokens_in=mean([float(r.tokens_in) for r in gens]),
        tokens_out=mean([float(r.tokens_out) for r in gens]),
        attempts=mean([float(len(r.attempts)) for r in gens]),
        best_delta=max(deltas) if deltas else None,
    )


def render(rows: list[Row]) -> str:
    """The comparison table, one row per configuration."""
    header = [
        "config",
        "gens",
        "ok",
        "ok frac",
        *(s.value for s in FAILURES),
        "llm s/gen",
        "eval s/gen",
        "tok in/gen",
        "tok out/gen",
        "failed attempts/gen",
        "best Δ",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        frac = f"{row.ok / row.generations:.2f}" if row.generations else "-"
        best = f"{row.best_delta:+.4f}" if row.best_delta is not None else "-"
        cells = [
            row.name,
            str(row.generations),
            str(row.ok),
            frac,
            *(str(row.failures.get(s.value, 0)) for s in FAILURES),
            f"{row.llm_seconds:.0f}",
            f"{row.other_seconds:.0f}",
            f"{row.tokens_in:.0f}",
            f"{row.tokens_out:.0f}",
            f"{row.attempts:.1f}",
            best,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run (or resume) every configuration, then print the table from the ledgers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="smoke", help="the tasks' suite (default smoke)")
    parser.add_argument("--task", action="append", help="tasks instead of the suite")
    parser.add_argument("--generations", type=int, default=5)
    parser.add_argument("--llm-model", default="qwen2.5-coder-1.5b", help="GGUF file or name")
    parser.add_argument("--encoder", default="all-MiniLM-L6-v2")
    parser.add_argument("--run-dir", type=Path, required=True)
    parser.add_argument("--config", action="append", choices=[c.name for c in CONFIGS])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--llm-threads", type=int, default=1)
    parser.add_argument("--n-ctx", type=int, default=8192, help="llama.cpp context window")
    parser.add_argument("--max-tokens", type=int, default=1024, help="completion budget")
    parser.add_argument("--context-tokens", type=int, default=3000)
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per task")
    parser.add_argument("--memory-gb", type=int, default=4)
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--cache-dir", type=Path)
    parser.add_argument("--report", action="store_true", help="only print the table")
    parser.add_argument(
        "--with-run",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="also tabulate a search run directory made by `embedding-ttc search` (every "
        "generation of it), e.g. the CLI's default drafting on the same suite and seed",
    )
    args = parser.parse_args(argv)
    configs = [c for c in CONFIGS if not args.config or c.name in args.config]
    if not args.report:
        run(args, configs)
    rows = [
        summarise(c.name, Ledger(args.run_dir / c.name).records, args.generations) for c in configs
    ]
    for spec in args.with_run:
        name, sep, folder = spec.partition("=")
        if not sep or not name or not folder:
            parser.error(f"--with-run takes NAME=DIR, got {spec!r}")
        records = Ledger(Path(folder)).records
        rows.append(summarise(name, records, max((r.generation for r in records), default=0)))
    print(render(rows))
    print(
        " ".join(
            f"ok_fraction[{r.name}]={r.ok / r.generations:.2f}" if r.generations else ""
            for r in rows
        ).strip()
    )
    return 0


if __name__ == "__main__":
    from data_errors import run

    raise SystemExit(run(main))
