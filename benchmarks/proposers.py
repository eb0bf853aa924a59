"""The proposers side by side on the discovery suite: structural, draft, edit, guided, OpenEvolve.

Each configuration is a search run of the same problem: the discovery suite, the default
encoder, the same seed, the validation split, BM25DenseRRF as the reference and the objective
(the settings of ``results/search-transfer``), G generations. The LLM configurations use the
same local model (Qwen2.5-Coder-1.5B through llama-cpp):

* ``structural``: the structural proposer (no LLM). Its run is ``results/search-transfer``
  itself: a search is sequential and seeded, so its first G generations are a G-generation run;
* ``draft``: the drafting proposer (a whole program per generation from a directive, best of
  three drafts, pre-check and one repair turn: the local model's defaults);
* ``edit-ideas``: the edit proposer (search/replace blocks on one parent, its lineage's
  lessons, one idea the parent lacks named in each prompt); ``edit``: the same without the
  named idea (``--no-edit-ideas``, the configuration run before the ideas existed);
* ``guided``: the guided structural proposer (the model chooses the genome edit under a
  grammar, the structural renderer writes the program), offered every open edit;
  ``guided-offers``: the same offered a seeded sample of open edits, one of each kind first
  (``--guided-offers``, the default of a new guided run); ``guided-anchored``: guided-offers
  keeping the dense cosine ``S`` in every program (``--guided-keep dense``: no edit drops or
  swaps it out); ``guided-share``: guided-anchored whose reply also sets the convex fusion's
  share (``--guided-share``; the earlier guided runs kept the middle share a convex fusion
  starts at);
* ``openevolve``: OpenEvolve against the same model served by llama-cpp-python's server, each
  program evaluated by the search's own evaluator into a ledger
  (``benchmarks/openevolve_peer``), read here like the others.

Runs are ``embedding-ttc search`` commands (printed, and run with ``--run``), one run directory
each under ``--out``, resumed from their ledgers; the table is read from the ledgers alone,
over generations 1..G. One row per configuration: the share of generations that yielded a
valid, novel, evaluated program; the best validation mean Δ against P0 and against the
reference of the transfer frontier (the transfer admission rule, which reads the validation
part no proposer sees); the frontier's size; LLM and evaluation seconds and tokens per
generation. The last line is machine-readable.

    .venv/bin/python benchmarks/proposers.py --generations 20 --run     # runs, then the table
    .venv/bin/python benchmarks/proposers.py --generations 20           # the table only
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.frontier import admitted
from embedding_ttc.runs.ledger import Ledger
from embedding_ttc.runs.records import LedgerRecord
from embedding_ttc.search.strategies.guided import GUIDED_OFFERS

REPO = Path(__file__).resolve().parent.parent
STRUCTURAL_RUN = REPO / "results" / "search-transfer"
SETTINGS = (
    "--suite", "discovery", "--seed", "0", "--validation-share", "0.3",
    "--reference", "BM25DenseRRF", "--objective", "reference",
)  # fmt: skip
"""The problem every configuration runs (``results/search-transfer``'s settings)."""

LLM_MODES = (
    "guided", "guided-offers", "guided-anchored", "guided-share", "edit-ideas", "edit", "draft"
)  # fmt: skip
"""The LLM configurations, cheapest first (the order they run in); each is its run folder."""

MODE_OPTIONS = {
    "guided": ("--strategy", "guided", "--guided-offers", "0", "--no-guided-share"),
    "guided-offers": (
        *("--strategy", "guided", "--guided-offers", str(GUIDED_OFFERS)),
        "--no-guided-share",
    ),
    "guided-anchored": (
        *("--strategy", "guided", "--guided-offers", str(GUIDED_OFFERS)),
        *("--guided-keep", "dense", "--no-guided-share"),
    ),
    "guided-share": (
        *("--strategy", "guided", "--guided-offers", str(GUIDED_OFFERS)),
        *("--guided-keep", "dense", "--guided-share"),
    ),
    "edit-ideas": ("--strategy", "edit", "--edit-ideas"),
    "edit": ("--strategy", "edit", "--no-edit-ideas"),
    "draft": ("--strategy", "draft"),
}
"""The search options of each LLM configuration."""


@dataclass(frozen=True)
class Row:
    """One configuration's numbers over generations 1..G of its ledger."""

    name: str
    generations: int
    valid: int
    statuses: dict[str, int]
    best_p0: float | None
    best_reference: float | None
    frontier: int
    llm_seconds: float
    eval_seconds: float
    tokens_in: float
    tokens_out: float


def command(mode: str, generations: int, run_dir: Path, llm_model: str) -> list[str]:
    """The ``embedding-ttc search`` command of an LLM configuration."""
    return [
        sys.executable, "-m", "embedding_ttc.cli", "search", *SETTINGS,
        "--backend", "llama-cpp", "--llm-model", llm_model, *MODE_OPTIONS[mode],
        "--generations", str(generations), "--run-dir", str(run_dir),
    ]  # fmt: skip


def _last_checkpoint(folder: Path) -> Path | None:
    """OpenEvolve's latest checkpoint folder of the run in ``folder`` (``None`` without one)."""
    done = [meta.parent for meta in (folder / "openevolve" / "checkpoints").glob("*/metadata.json")]
    done = [path for path in done if path.name.startswith("checkpoint_")]
    return max(done, key=lambda path: int(path.name.rsplit("_", 1)[1]), default=None)


def openevolve_iterations(folder: Path) -> int | None:
    """The iterations an OpenEvolve run made (its last checkpoint's), ``None`` without one.

    An iteration whose reply OpenEvolve drops itself (a rewrite identical to its parent, a
    reply it cannot parse) never reaches our evaluator, so it has no ledger line; it still
    counts as a generation without a valid program.
    """
    last = _last_checkpoint(folder)
    if last is None:
        return None
    return int(json.loads((last / "metadata.json").read_text(encoding="utf-8"))["last_iteration"])


def openevolve_lines(folder: Path, iterations: int) -> int | None:
    """How many of the ledger's generations came from OpenEvolve's first ``iterations``.

    OpenEvolve evaluates one child at a time (``parallel_evaluations: 1``), so the ledger's
    generations are its evaluated children in iteration order; its last checkpoint keeps every
    program (population 1000) with the iteration that found it. ``None`` without a checkpoint.
    """
    last = _last_checkpoint(folder)
    if last is None:
        return None
    found = []
    for path in (last / "programs").glob("*.json"):
        found.append(int(json.loads(path.read_text(encoding="utf-8"))["iteration_found"]))
    return sum(1 <= n <= iterations for n in found)


def run_row(name: str, folder: Path, generations: int) -> Row:
    """The row of the run in ``folder`` over its first ``generations`` generations.

    OpenEvolve's run counts its iterations (:func:`openevolve_iterations`), and of a longer
    run only the ledger lines of the first ``generations`` iterations (:func:`openevolve_lines`).
    """
    records, attempts = Ledger(folder).records, None
    if name == "openevolve":
        attempts = openevolve_iterations(folder)
        lines = openevolve_lines(folder, generations)
        if lines is not None:
            records = tuple(r for r in records if r.generation <= lines)
    return summarise(name, records, generations, attempts)


def summarise(
    name: str, records: tuple[LedgerRecord, ...], generations: int, attempts: int | None = None
) -> Row:
    """The row of one run over its generations 1..``generations`` (P0, generation 0, aside).

    ``attempts``: generations the proposer made, when some left no ledger line (OpenEvolve's).
    """
    gens = [r for r in records if 1 <= r.generation <= generations]
    total = max(len(gens), min(attempts, generations)) if attempts is not None else len(gens)
    n = max(total, 1)
    upto = [r for r in records if r.generation <= generations]
    front = admitted(upto, "transfer", "reference")
    best = front[-1] if front else None
    statuses: dict[str, int] = {}
    for r in gens:
        statuses[r.status.value] = statuses.get(r.status.value, 0) + 1
    if total > len(gens):
        statuses["dropped by the peer"] = total - len(gens)
    return Row(
        name=name,
        generations=total,
        valid=sum(r.status is Status.OK for r in gens),
        statuses=statuses,
        best_p0=best.mean("p0", "validation") if best else None,
        best_reference=best.mean("reference", "validation") if best else None,
        frontier=len(front),
        llm_seconds=sum(r.llm_seconds for r in gens) / n,
        eval_seconds=sum(max(r.seconds - r.llm_seconds, 0.0) for r in gens) / n,
        tokens_in=sum(r.tokens_in for r in gens) / n,
        tokens_out=sum(r.tokens_out for r in gens) / n,
    )


def render(rows: list[Row]) -> str:
    """The comparison table."""
    header = ["proposer", "gens", "valid", "valid %", "best val Δ vs P0", "best val Δ vs ref",
              "transfer frontier", "LLM s/gen", "eval s/gen", "tokens in/out per gen",
              "failures"]  # fmt: skip
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        share = f"{100 * r.valid / r.generations:.0f} %" if r.generations else "-"
        fails = ", ".join(f"{k} {v}" for k, v in sorted(r.statuses.items()) if k != "ok")
        cells = [
            r.name, str(r.generations), str(r.valid), share,
            f"{r.best_p0:+.4f}" if r.best_p0 is not None else "-",
            f"{r.best_reference:+.4f}" if r.best_reference is not None else "-",
            str(r.frontier), f"{r.llm_seconds:.0f}", f"{r.eval_seconds:.0f}",
            f"{r.tokens_in:.0f} / {r.tokens_out:.0f}", fails or "-",
        ]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run (with ``--run``) or resume the LLM configurations, then print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generations", type=int, default=20, help="G (default 20)")
    parser.add_argument("--out", type=Path, default=REPO / "results" / "proposers",
                        help="run directories of the LLM configurations, one per mode")  # fmt: skip
    parser.add_argument("--mode", action="append", choices=LLM_MODES,
                        help="LLM configurations to run or show (default all)")  # fmt: skip
    parser.add_argument("--llm-model", default="qwen2.5-coder-1.5b", help="GGUF file or name")
    parser.add_argument("--structural-run", type=Path, default=STRUCTURAL_RUN,
                        help="the structural run (default results/search-transfer)")  # fmt: skip
    parser.add_argument("--run", action="store_true", help="run or resume the searches first")
    args = parser.parse_args(argv)
    modes = args.mode or list(LLM_MODES)
    for mode in modes:
        cmd = command(mode, args.generations, args.out / mode, args.llm_model)
        print("$ " + shlex.join(cmd[1:]).replace("-m embedding_ttc.cli", "embedding-ttc", 1))
        if args.run:
            started = time.monotonic()
            subprocess.run(cmd, check=True, cwd=REPO)
            print(f"  {mode}: {time.monotonic() - started:.0f} s", file=sys.stderr)
    rows = [summarise("structural", Ledger(args.structural_run).records, args.generations)]
    for name in [*modes, "openevolve"]:
        folder = args.out / name
        if (folder / "ledger.jsonl").exists():
            rows.append(run_row(name, folder, args.generations))
    print(render(rows))
    print(" ".join(f"valid[{r.name}]={r.valid}/{r.generations}" for r in rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
