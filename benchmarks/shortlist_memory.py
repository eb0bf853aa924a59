"""Peak memory of full ranking against shortlist mode, side by side in one run.

Each (task, program, mode) runs ``embedding-ttc evaluate --json`` in a fresh process, so its
peak resident set size (``ru_maxrss`` of the finished child) is its own. Full ranking holds
|Q|×|D| score matrices (several of them inside a program); shortlist mode reranks each query's
best K first-stage candidates in query batches, so its matrices grow with |Q|·K.

Run (after the tasks' embeddings are in the cache, or the first run also times encoding)::

    .venv/bin/python benchmarks/shortlist_memory.py --encoder tokenlearn-static-64 \
        --suite scale --program SoftCentroid --program BidirZScore

The last line is machine-readable: the largest full/shortlist peak-memory ratio and the
largest nDCG@10 difference between the modes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from embedding_ttc.tasks.catalog import suite_tasks


@dataclass(frozen=True)
class Measure:
    """One evaluation in its own process."""

    peak_mib: float
    seconds: float
    ndcg: float


def run_one(encoder: str, task: str, program: str, shortlist: int | None) -> Measure:
    """Evaluate in a child process; return its peak RSS, wall time and nDCG@10."""
    cmd = [
        sys.executable,
        "-m",
        "embedding_ttc.cli",
        "evaluate",
        "--encoder",
        encoder,
        "--task",
        task,
        "--program",
        program,
        "--json",
        "--no-progress",
    ]
    if shortlist is not None:
        cmd += ["--shortlist", str(shortlist)]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        child = subprocess.Popen(cmd, stdout=out, stderr=err, text=True)
        # wait4 gives this child's own rusage (RUSAGE_CHILDREN would be a running maximum).
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        if child.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{err.read()[-2000:]}")
        rows = json.loads(out.read())
    peak_kib = usage.ru_maxrss  # KiB on Linux
    ndcg = next(r["comparison"]["ndcg_at_10"] for r in rows if r["program"] == program)
    return Measure(peak_kib / 1024.0, seconds, ndcg)


def main(argv: list[str] | None = None) -> int:
    """Measure every (task, program) in both modes and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--encoder", default="tokenlearn-static-64")
    parser.add_argument("--suite", default="scale")
    parser.add_argument("--task", action="append", default=[])
    parser.add_argument("--program", action="append", default=[])
    parser.add_argument("--shortlist", type=int, default=100)
    args = parser.parse_args(argv)
    tasks = args.task or suite_tasks(args.suite)
    programs = args.program or ["SoftCentroid", "BidirZScore"]
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    print(
        f"{'task':<22} {'program':<14} {'full MiB':>9} {'short MiB':>10} {'ratio':>6} "
        f"{'full s':>7} {'short s':>8} {'nDCG full':>10} {'nDCG short':>11}"
    )
    worst_ratio, worst_drop = 0.0, 0.0
    for task in tasks:
        # Warm-up, not measured: fills the embedding cache, so both modes read the same cache.
        run_one(args.encoder, task, "P0", args.shortlist)
        for program in programs:
            short = run_one(args.encoder, task, program, args.shortlist)
            full = run_one(args.encoder, task, program, None)
            ratio = full.peak_mib / short.peak_mib
            worst_ratio = max(worst_ratio, ratio)
            worst_drop = max(worst_drop, abs(full.ndcg - short.ndcg))
            print(
                f"{task:<22} {program:<14} {full.peak_mib:>9.0f} {short.peak_mib:>10.0f} "
                f"{ratio:>6.2f} {full.seconds:>7.1f} {short.seconds:>8.1f} "
                f"{full.ndcg:>10.4f} {short.ndcg:>11.4f}"
            )
    print(f"max_memory_ratio={worst_ratio:.2f} max_ndcg_difference={worst_drop:.4f}")
    return 0


if __name__ == "__main__":
    from data_errors import run

    raise SystemExit(run(main))
