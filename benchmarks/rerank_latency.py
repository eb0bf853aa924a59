"""Per-query latency of deployed programs, and BidirZScore deployed against batch mode.

**Latency** (default): for each program's index of one task, queries one at a time through
:meth:`Reranker.search_scores` (dense first stage, then the program) over shortlists of 100 and
1,000 documents. Per query: query-time encoder calls (texts sent to the live encoder: the query
itself plus any the program encodes), ms in the encoder, ms in the program's algebra (and text
work: chunking, BM25), the total, and its ratio to the first stage alone (query encode + dense
top-K over ``D``). The query encoder is uncached, so encoding time is real. Also per query:
the stored embeddings the program reads (its candidates' documents and the index-time texts
served by row), and the floor of any algebra over them: that many stored rows gathered once
and multiplied by the query.

**Served, on /v1/rerank** (``--v1``): each program's index served by the app ``serve`` runs
(FastAPI's test client, in process: no socket in the numbers), every program answering the
same requests in turn (each program first as often as the others), so a busy moment of the
machine falls on all of them: per query, the
query and its candidates by text (the dense first stage's best ``--sizes`` documents, chosen
untimed; every index holds them, so none is encoded live), as a search stack calls its second
stage. The median and mean ms of a request over ``--queries`` queries after two untimed ones,
and the ratio of the medians to P0's. ``--record DIR`` writes them to ``DIR/latency.json``
(:mod:`embedding_ttc.analysis.latency`), which the report of the matrix in ``DIR`` renders
beside its held-out numbers.

**Batch vs deployed** (``--batch-vs-deployed``): nDCG@10 of BidirZScore on ``scifact`` and
``cranfield`` in batch mode (the evaluate path, ``--shortlist 100``: per-column z-scores over
shortlist batches of 64 queries) and deployed (each query alone over the same 100 candidates,
with the index's 64 reference queries appended for the statistics), on the queries that are not
in the reference sample. Also shown: a query alone without reference rows (every column
z-score is 0, the ranking degenerates) and the evaluate path without a shortlist.

**Live parity** (``--live-parity``): LexicalHybridRRF's and CrossRoundRRF's deployed scores of
each query alone over the last ``--sizes`` candidates, from the live path (the live rows only,
float32 cosines about each centroid) and from the whole call as the evaluation path computes it
(every row, float64-centred chunks): how many queries score the same, bit for bit, keep the
same top 10 and the same full order, and the largest difference.

**Served vs unserved** (``--served-vs-unserved``): each program file of ``--programs`` scored
by :meth:`Reranker.score` (a query and its dense top ``--sizes`` candidates, no HTTP), its
primitives served from the index (BM25, chunks and their rows,
:mod:`embedding_ttc.program_files.sandbox.served`) and, in the same warm child, unserved
(``ctx.deployed`` taken away: the child computes them from the texts, as before they were
served), beside P0, the arms interleaved query by query so that the machine's load falls on
all of them: median ms and the ratio to P0.

A program file (``--programs path/to/g0048.py``) is built as ``index build --program-file``
builds it (its recipe derived by measurement) and served from its warm sandboxed child.

Indexes are built under ``--work`` when missing (``<task>-<encoder>-<program>``, the layout of
``embedding-ttc index build --task T --encoder E --program P --out ...``), with the on-disk
embedding cache.

    .venv/bin/python benchmarks/rerank_latency.py --work /tmp/deploy-bench --queries 30
    .venv/bin/python benchmarks/rerank_latency.py --work /tmp/deploy-bench --docs 1000 --v1 \
        --programs P0 BM25DenseRRF ConvexHybrid --record results/transfer-select
    .venv/bin/python benchmarks/rerank_latency.py --work /tmp/deploy-bench --batch-vs-deployed
    .venv/bin/python benchmarks/rerank_latency.py --work /tmp/deploy-bench --docs 2000 \
        --served-vs-unserved --programs results/search-select/programs/g0048.py
    .venv/bin/python benchmarks/rerank_latency.py --work /tmp/deploy-bench --docs 2000 \
        --queries 100 --live-parity --programs LexicalHybridRRF CrossRoundRRF
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from unittest import mock

import numpy as np

from embedding_ttc.analysis.latency import V1_RERANK, LatencyRecord, LatencyRow, write_latency
from embedding_ttc.cli.deploy import set_threads
from embedding_ttc.deploy.allocator import DEFAULT_RETAIN_MB, retain_freed_memory
from embedding_ttc.deploy.build import DEFAULT_REFERENCE_SIZE
from embedding_ttc.deploy.corpus import Document, sample_texts
from embedding_ttc.deploy.index import Index
from embedding_ttc.deploy.program_file import read_deployable
from embedding_ttc.deploy.reranker import Reranker
from embedding_ttc.encoders.base import QUERY
from embedding_ttc.encoders.cache import CachedEncoder
from embedding_ttc.encoders.catalog import DEFAULT_ENCODER, load_encoder
from embedding_ttc.evaluation.evaluate import run_programs
from embedding_ttc.evaluation.ranking import TaskRanker
from embedding_ttc.programs.base import Context, Program
from embedding_ttc.programs.catalog import get_program
from embedding_ttc.tasks.catalog import load_task
from embedding_ttc.tasks.task import join_title_text

PROGRAMS = ("P0", "BidirZScore", "SentMaxSim", "LexicalHybridRRF", "SoftCentroid")


def ensure_index(
    work: Path, task_name: str, encoder_name: str, program: str, docs: int | None = None
) -> Path:
    """The index directory, built (as ``index build --task`` builds it) if missing.

    With ``docs``, only the task's first ``docs`` documents are indexed (``-first{docs}``).
    """
    suffix = f"-first{docs}" if docs else ""
    out = work / f"{task_name}-{encoder_name}-{program_label(program)}{suffix}"
    if (out / "manifest.json").exists():
        return out
    task = load_task(task_name)
    corpus = [
        Document(i, t, b)
        for i, t, b in zip(task.doc_ids, task.doc_titles, task.doc_bodies, strict=True)
    ][:docs]
    queries = sample_texts(task.query_texts, DEFAULT_REFERENCE_SIZE, 0)
    print(f"building {out.name} ...", flush=True)
    started = time.perf_counter()
    Index.build(
        out,
        corpus,
        encoder=CachedEncoder(load_encoder(encoder_name)),
        program=read_deployable(Path(program)) if program.endswith(".py") else program,
        reference_queries=queries,
        reference_source=f"{len(queries)} of the queries of {task_name} (seed 0)",
        source=f"task:{task_name}{suffix}",
    )
    print(f"built {out.name} in {time.perf_counter() - started:.0f} s", flush=True)
    return out


def program_label(program: str) -> str:
    """A library program's name, or a program file's stem (``--programs`` takes either)."""
    return Path(program).stem if program.endswith(".py") else program


def first_stage_alone(reranker: Reranker, query: str, n: int) -> float:
    """Seconds for the first stage by itself: encode the query, dense top-``n`` over ``D``."""
    start = time.perf_counter()
    reranker.first_stage([query], n, "dense")
    return time.perf_counter() - start


def floor_seconds(index: Index, n_rows: int, query: np.ndarray, repeats: int = 5) -> float:
    """Seconds to gather ``n_rows`` random stored rows once and multiply them by ``query``.

    The least any algebra over that many stored embeddings costs. The rows are read from the
    index's largest memory-mapped array (its biggest store group, else its documents), a new
    random set each time, as each query reads other candidates; the mean of ``repeats`` after
    one untimed round (whose page faults a serving process has long paid).
    """
    segment = index.segments[0]
    arrays = [g.embeddings for g in segment.store.groups.values()] + [segment.documents]
    array = np.asarray(max(arrays, key=len), dtype=np.float32)
    rng = np.random.default_rng(0)
    seconds = []
    for _ in range(repeats + 1):
        rows = np.sort(rng.choice(len(array), n_rows, replace=n_rows > len(array)))
        start = time.perf_counter()
        np.take(array, rows, axis=0) @ query
        seconds.append(time.perf_counter() - start)
    return statistics.fmean(seconds[1:])


def latency(args: argparse.Namespace) -> None:
    task = load_task(args.task)
    queries = list(task.query_texts[: args.queries])
    live = load_encoder(args.encoder)  # uncached: query encoding time is real
    live.encode(["warm up"], view=QUERY)
    floor_query = live.encode([queries[0]], view=QUERY)[0]  # any unit vector serves the floor
    header = (
        f"{'program':18s} {'shortlist':>9s} {'enc calls':>9s} {'encode ms':>9s} "
        f"{'algebra ms':>10s} {'total ms':>9s} {'1st stage ms':>12s} {'ratio':>6s} "
        f"{'stored rows':>11s} {'floor ms':>8s}"
    )
    corpus = f"first {args.docs} documents of {args.task}" if args.docs else args.task
    print(f"\nper query, mean over {len(queries)} queries; index: {corpus} ({args.encoder})")
    print(header)
    print("-" * len(header))
    for program in args.programs:
        index = Index.load(ensure_index(args.work, args.task, args.encoder, program, args.docs))
        reranker = Reranker(index, live)
        reranker.search_scores(queries[:1], 10, "dense", 100)  # warm up
        for size in args.sizes:
            rows = []
            for query in queries:
                base = first_stage_alone(reranker, query, size)
                start = time.perf_counter()
                scored = reranker.search_scores([query], 10, "dense", size)
                reranker.top(scored, 10)
                total = time.perf_counter() - start
                s = scored.stats
                calls = s.query_encodes + s.program_encodes
                stored = s.store_texts + len(scored.candidates[0])  # chunks, D rows
                rows.append((calls, s.encode_seconds, s.algebra_seconds, total, base, stored))
                assert s.index_misses == 0, "the index lacks document-side texts"
            mean = [statistics.fmean(col) for col in zip(*rows, strict=True)]
            floor = floor_seconds(index, round(mean[5]), floor_query)
            print(
                f"{program_label(program):18s} {size:9d} {mean[0]:9.1f} {1e3 * mean[1]:9.1f} "
                f"{1e3 * mean[2]:10.1f} {1e3 * mean[3]:9.1f} {1e3 * mean[4]:12.1f} "
                f"{mean[3] / mean[4]:6.1f} {mean[5]:11.0f} {1e3 * floor:8.2f}"
            )


def v1_latency(args: argparse.Namespace) -> LatencyRecord:
    """Each program served, timed on ``/v1/rerank`` side by side (see the module docstring)."""
    from fastapi.testclient import TestClient

    from embedding_ttc.deploy.service import create_app

    task = load_task(args.task)
    queries = list(task.query_texts[: args.queries + 2])
    live = load_encoder(args.encoder)  # uncached: query encoding time is real
    live.encode(["warm up"], view=QUERY)
    rerankers = {
        program_label(p): Reranker(
            Index.load(ensure_index(args.work, args.task, args.encoder, p, args.docs)), live
        )
        for p in args.programs
    }
    clients = {label: TestClient(create_app(r)) for label, r in rerankers.items()}
    texts = dict(
        zip(
            task.doc_ids,
            (join_title_text(t, b) for t, b in zip(task.doc_titles, task.doc_bodies, strict=True)),
            strict=True,
        )
    )
    first = next(iter(rerankers.values()))  # every index holds the same documents and D
    rows = []
    corpus = f"first {args.docs} documents of {args.task}" if args.docs else args.task
    print(f"\n{V1_RERANK}: median of {args.queries} requests; index: {corpus} ({args.encoder})")
    header = f"{'program':36s} {'candidates':>10s} {'median ms':>9s} {'mean ms':>8s} {'x P0':>6s}"
    print(header)
    print("-" * len(header))
    for size in args.sizes:
        bodies = [
            {"query": q, "documents": [texts[i] for i in ids], "top_n": 10}
            for q, ids in zip(queries, first.first_stage(queries, size, "dense"), strict=True)
        ]
        seconds: dict[str, list[float]] = {label: [] for label in clients}
        labels = list(clients)
        for i, body in enumerate(bodies):
            for label in labels[i % len(labels) :] + labels[: i % len(labels)]:  # each leads
                client = clients[label]
                start = time.perf_counter()
                response = client.post(V1_RERANK, json=body)
                elapsed = time.perf_counter() - start
                if response.status_code != 200:
                    raise SystemExit(f"{label}: {response.status_code}: {response.text[:300]}")
                if response.json()["meta"]["live_documents"]:
                    raise SystemExit(f"{label}: the index lacks candidates: they were encoded")
                if i >= 2:
                    seconds[label].append(elapsed)
        base = statistics.median(seconds["P0"]) if "P0" in seconds else None
        for label, s in seconds.items():
            row = LatencyRow(
                program=label,
                candidates=size,
                median_ms=round(1e3 * statistics.median(s), 2),
                mean_ms=round(1e3 * statistics.fmean(s), 2),
            )
            rows.append(row)
            ratio = f"{statistics.median(s) / base:6.2f}" if base else f"{'–':>6s}"
            print(f"{label:36s} {size:10,d} {row.median_ms:9.1f} {row.mean_ms:8.1f} {ratio}")
    return LatencyRecord(
        task=args.task,
        docs=args.docs or len(task.doc_ids),
        encoder=args.encoder,
        queries=args.queries,
        threads=args.threads,
        cpus=os.cpu_count(),
        command=[Path(sys.argv[0]).as_posix(), *sys.argv[1:]],
        measured_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        rows=rows,
    )


class _Unserved:
    """A deployed program file called without ``ctx.deployed``: its primitives unserved."""

    def __init__(self, program: Program) -> None:
        self.inner = program
        self.name = program.name

    def __call__(self, Q: np.ndarray, D: np.ndarray, S: np.ndarray, ctx: Context) -> np.ndarray:
        return self.inner(Q, D, S, dataclasses.replace(ctx, deployed=None))


def served_vs_unserved(args: argparse.Namespace) -> None:
    """Each program file served and unserved beside P0, interleaved (the module docstring)."""
    task = load_task(args.task)
    queries = list(task.query_texts[: args.queries + 2])
    live = load_encoder(args.encoder)
    live.encode(["warm up"], view=QUERY)
    p0 = Reranker(
        Index.load(ensure_index(args.work, args.task, args.encoder, "P0", args.docs)), live
    )
    for program in [p for p in args.programs if p.endswith(".py")]:
        index = Index.load(ensure_index(args.work, args.task, args.encoder, program, args.docs))
        served, unserved = Reranker(index, live), Reranker(index, live)
        unserved.program = _Unserved(unserved.program)
        arms = [("P0", p0), ("served", served), ("unserved", unserved)]
        for size in args.sizes:
            lists = p0.first_stage(queries, size, "dense")
            seconds: dict[str, list[float]] = {name: [] for name, _ in arms}
            for i, (query, ids) in enumerate(zip(queries, lists, strict=True)):
                for name, reranker in arms[i % 3 :] + arms[: i % 3]:  # each leads in turn
                    start = time.perf_counter()
                    reranker.score([query], [ids])
                    if i >= 2:
                        seconds[name].append(time.perf_counter() - start)
            base = statistics.median(seconds["P0"])
            cells = [
                f"{name} {1e3 * statistics.median(s):.1f} ms ({statistics.median(s) / base:.2f} x)"
                for name, s in seconds.items()
            ]
            print(f"{program_label(program)} at {size:,d} candidates: " + ", ".join(cells))


LIVE_PATHS = {
    "LexicalHybridRRF": "embedding_ttc.programs.library.lexical_hybrid_rrf.live_rows",
    "CrossRoundRRF": "embedding_ttc.programs.library.cross_round_rrf.live_rows",
}
"""The programs with a deployed path of their own, and the function that selects it."""


def live_parity(args: argparse.Namespace) -> None:
    """A deployed query's scores: the program's live path against the whole call's.

    For each program of ``--programs`` that has a live path (:data:`LIVE_PATHS`), each query is
    scored alone (first stage, then the program over ``--sizes[-1]`` candidates), once as
    deployed (the live rows alone, float32 cosines about each centroid) and once as the
    evaluation path computes the same call (every row, the chunks centred in float64).
    """
    task = load_task(args.task)
    queries = list(task.query_texts[: args.queries])
    size = args.sizes[-1]
    for program in [p for p in args.programs if p in LIVE_PATHS]:
        index = Index.load(ensure_index(args.work, args.task, args.encoder, program, args.docs))
        reranker = Reranker(index, load_encoder(args.encoder))
        live = [reranker.search_scores([q], size, "dense", size) for q in queries]
        with mock.patch(LIVE_PATHS[program], return_value=None):
            whole = [reranker.search_scores([q], size, "dense", size) for q in queries]
        diffs, same_top, same_order = [], 0, 0
        for a, b in zip(live, whole, strict=True):
            assert np.array_equal(a.candidates[0], b.candidates[0])
            x, y = np.asarray(a.scores[0]), np.asarray(b.scores[0])
            diffs.append(float(np.abs(x - y).max()))
            ox, oy = np.argsort(-x, kind="stable"), np.argsort(-y, kind="stable")
            same_top += bool(np.array_equal(ox[:10], oy[:10]))
            same_order += bool(np.array_equal(ox, oy))
        print(
            f"\n{program} deployed, {len(queries)} queries of {args.task}, {size} candidates, "
            f"live path vs whole call: identical scores {sum(d == 0 for d in diffs)}, "
            f"same top 10 {same_top}, same full order {same_order}, max |diff| {max(diffs):.2e}"
        )


def batch_vs_deployed(args: argparse.Namespace) -> None:
    program = get_program("BidirZScore")
    print("\nBidirZScore nDCG@10: batch mode (evaluate) vs deployed (reference rows)")
    header = (
        f"{'task':10s} {'held-out q':>10s} {'full':>7s} {'batch@100':>9s} "
        f"{'deployed':>8s} {'delta':>7s} {'alone':>7s} {'P0@100':>7s}"
    )
    print(header)
    print("-" * len(header))
    for name in args.ndcg_tasks:
        task = load_task(name)
        index_dir = ensure_index(args.work, name, args.encoder, "BidirZScore")
        reranker = Reranker.load(index_dir)  # the cached encoder, as the build used
        encoder = reranker.encoder
        assert reranker.index.reference is not None
        reference = set(reranker.index.reference.texts)
        held = [i for i, q in enumerate(task.query_texts) if q not in reference]
        ranker = TaskRanker(task)
        full = next(run_programs([program], task, encoder))
        batch, p0 = run_programs(
            [program, get_program("P0")], task, encoder, shortlist=args.shortlist
        )
        deployed_rows = list(batch.rows)
        alone_rows = list(batch.rows)
        for i in held:
            cand = batch.rows[i][0]
            assert cand is not None
            ids = [task.doc_ids[j] for j in cand]
            scored = reranker.score([task.query_texts[i]], [ids])
            deployed_rows[i] = (scored.candidates[0], scored.scores[0])
            lone = reranker.score([task.query_texts[i]], [ids], joint=True)
            alone_rows[i] = (lone.candidates[0], lone.scores[0])

        f, b, d, a, p = (
            float(np.mean(ranker.ndcg_rows(rows)[held]))
            for rows in (full.rows, batch.rows, deployed_rows, alone_rows, p0.rows)
        )
        print(
            f"{name:10s} {len(held):10d} {f:7.4f} {b:9.4f} {d:8.4f} {d - b:+7.4f} {a:7.4f} {p:7.4f}"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="folder of the indexes")
    parser.add_argument("--task", default="scifact")
    parser.add_argument("--encoder", default=DEFAULT_ENCODER)
    parser.add_argument(
        "--programs",
        nargs="+",
        default=list(PROGRAMS),
        help="library programs, or program files (a path ending in .py, served from its sandbox)",
    )
    parser.add_argument("--sizes", nargs="+", type=int, default=[100, 1000])
    parser.add_argument("--queries", type=int, default=30, help="queries timed per row")
    parser.add_argument("--docs", type=int, help="index only the task's first N documents")
    parser.add_argument("--batch-vs-deployed", action="store_true")
    parser.add_argument("--live-parity", action="store_true")
    parser.add_argument("--v1", action="store_true", help="time each program on /v1/rerank")
    parser.add_argument(
        "--served-vs-unserved",
        action="store_true",
        help="each program file with its primitives served and unserved, beside P0",
    )
    parser.add_argument(
        "--record",
        type=Path,
        metavar="DIR",
        help="with --v1: write the numbers to DIR/latency.json (DIR: a transfer matrix)",
    )
    parser.add_argument("--ndcg-tasks", nargs="+", default=["scifact", "cranfield"])
    parser.add_argument("--shortlist", type=int, default=100)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    parser.add_argument(
        "--retain-memory-mb",
        type=int,
        default=DEFAULT_RETAIN_MB,
        help="freed memory kept for reuse, as `serve` keeps it (0: the C library's default)",
    )
    args = parser.parse_args(argv)
    if args.record is not None and not args.v1:
        parser.error("--record records the /v1/rerank numbers: add --v1")
    set_threads(args.threads)
    retained = retain_freed_memory(args.retain_memory_mb)
    print(
        f"freed memory kept for reuse: {f'{args.retain_memory_mb} MB' if retained else 'default'}"
    )
    if args.batch_vs_deployed:
        batch_vs_deployed(args)
    elif args.live_parity:
        live_parity(args)
    elif args.served_vs_unserved:
        served_vs_unserved(args)
    elif args.v1:
        record = v1_latency(args)
        if args.record is not None:
            print(f"recorded in {write_latency(args.record, record)}")
    else:
        latency(args)
    return 0


if __name__ == "__main__":
    from data_errors import run

    raise SystemExit(run(main))
