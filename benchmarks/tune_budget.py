"""One ``tune`` of a task with 300 judged queries and 5,000 documents, timed against 30 minutes.

The issue's budget target: a search engineer's first ``tune`` of a task of that size finishes
within half an hour on two cores, encoding included. No discovery task is that size (and the
one that is, SciFact, is held out), so this builds one from two discovery-wide tasks of a data
root, in a temporary BEIR folder that is deleted afterwards (the data is not copied anywhere
else):

* every query of ``legal_summarization`` (290, with their judgements and their 445 contract
  sections),
* the first ten judged queries of ``lisa`` with their judgements,
* ``lisa``'s abstracts (its judged ones first) up to 5,000 documents in all.

Then it runs the command a user runs, ``embedding-ttc tune --task-dir ...`` with
``--budget-minutes`` (default 30), in a fresh embedding cache so that every document and query
is encoded, and prints the wall time, each step's share of it (read from the run's progress
lines) and the ratio to the budget::

    .venv/bin/python benchmarks/tune_budget.py --data-dir ../shared/datasets

The last line reads ``wall_seconds=… budget_seconds=… ratio=… queries=… documents=…``; the
target is ``ratio <= 1``. The run folder is kept with ``--keep DIR``.

Measured on 2026-11-29 on two cores, an empty cache, the default encoder: ``wall_seconds=630
budget_seconds=1800 ratio=0.35 queries=300 documents=5000``; the search ran its 30 generations
and stopped at 417 s, judging the candidates and the test report took the rest.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from embedding_ttc.tasks.catalog import find_data_root

QUERIES = 300
DOCUMENTS = 5_000
BASE = "legal_summarization"
FILLER = "lisa"


def _jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _qrels(path: Path) -> list[tuple[str, str, str]]:
    rows = [line.split("\t") for line in path.read_text().splitlines()[1:] if line.strip()]
    return [(q, d, s) for q, d, s in rows]


def build_task(root: Path, out: Path) -> tuple[int, int]:
    """Write the composed BEIR folder to ``out``; its query and document counts."""
    base, filler = root / BASE, root / FILLER
    corpus = _jsonl(base / "corpus.jsonl")
    queries = _jsonl(base / "queries.jsonl")
    qrels = _qrels(base / "qrels" / "test.tsv")
    more = QUERIES - len({q for q, _, _ in qrels})
    filler_qrels = _qrels(filler / "qrels" / "test.tsv")
    chosen = list(dict.fromkeys(q for q, _, _ in filler_qrels))[:more]
    judged = [(f"{FILLER}-{q}", f"{FILLER}-{d}", s) for q, d, s in filler_qrels if q in chosen]
    by_id = {str(r["_id"]): r for r in _jsonl(filler / "queries.jsonl")}
    queries += [{**by_id[q], "_id": f"{FILLER}-{q}"} for q in chosen]
    needed = {d for _, d, _ in judged}
    docs = [{**r, "_id": f"{FILLER}-{r['_id']}"} for r in _jsonl(filler / "corpus.jsonl")]
    docs.sort(key=lambda r: r["_id"] not in needed)  # judged abstracts first, stable otherwise
    corpus += docs[: DOCUMENTS - len(corpus)]
    if not needed <= {r["_id"] for r in corpus}:
        raise SystemExit("the composed corpus lacks a judged document: raise DOCUMENTS")
    out.mkdir(parents=True)
    (out / "qrels").mkdir()
    (out / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in corpus))
    (out / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in queries))
    lines = ["query-id\tcorpus-id\tscore", *("\t".join(row) for row in qrels + judged)]
    (out / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n")
    return len({q for q, _, _ in qrels + judged}), len(corpus)


def main() -> None:
    """Build the task, run ``tune`` on it once, print the wall time against the budget."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", help="the data root (default: as the command line finds it)")
    parser.add_argument("--budget-minutes", type=float, default=30.0)
    parser.add_argument("--keep", type=Path, help="keep the task and run folder here")
    parser.add_argument("tune_args", nargs="*", help="further `tune` options, after --")
    args = parser.parse_args()
    root = find_data_root(args.data_dir)
    with tempfile.TemporaryDirectory(prefix="tune-budget-") as tmp:
        work = args.keep or Path(tmp)
        n_queries, n_docs = build_task(root, work / "task")
        print(f"task: {n_queries} queries, {n_docs} documents ({BASE} + {FILLER})", flush=True)
        command = [
            str(Path(sys.executable).with_name("embedding-ttc")),
            "tune",
            "--task-dir",
            str(work / "task"),
            "--run-dir",
            str(work / "run"),
            "--cache-dir",
            str(work / "cache"),
            "--budget-minutes",
            f"{args.budget_minutes:g}",
            "--no-progress",
            *args.tune_args,
        ]
        started = time.monotonic()
        lines = []
        with subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=os.environ
        ) as child:
            assert child.stdout is not None
            for line in child.stdout:
                stamp = time.monotonic() - started
                lines.append((stamp, line.rstrip()))
                print(f"{stamp:7.1f}s  {line.rstrip()}", flush=True)
        wall = time.monotonic() - started
        if child.returncode != 0:
            raise SystemExit(f"tune exited with {child.returncode}")
    budget = args.budget_minutes * 60
    print(
        f"wall_seconds={wall:.0f} budget_seconds={budget:.0f} ratio={wall / budget:.2f} "
        f"queries={n_queries} documents={n_docs}"
    )


if __name__ == "__main__":
    main()
