"""A served program file beside the same computation as a library program, on both rerank routes.

Two indexes of the same documents, built as ``index build`` builds them: one of the library's
``P0`` (the cosine), one of a program file that returns the same matrix (``S.copy()``), served
from its warm sandboxed child (:mod:`embedding_ttc.program_files.sandbox.warm`). Each is served
by the app ``serve`` runs (FastAPI's test client, in process: no socket in the numbers), and
``/rerank`` (candidate ids) and ``/v1/rerank`` (documents given by their texts, all held by the
index) are timed at 100 and 1,000 candidates: the median of ``--requests`` requests, each a
different query (its embedding read from the on-disk cache, filled by an untimed pass, so
the columns differ by the program's cost alone), after two untimed ones. Printed side by side
with the ratio and the target
(the program file within 1.5x the library program, plus 5 ms).

    .venv/bin/python benchmarks/warm_program_file.py --work /tmp/warm-bench

Data: ``--task`` (default ``scifact``, 1,000 of its documents: in ``../shared/datasets``, or
``embedding-ttc data fetch scifact``); a packaged task runs anywhere offline
(``--task legal_summarization``, its 445 documents). A task it cannot find ends it with the
sentence saying how to get it.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from embedding_ttc.deploy.corpus import Document, sample_texts
from embedding_ttc.deploy.index import Index
from embedding_ttc.deploy.program_file import read_deployable
from embedding_ttc.deploy.reranker import Reranker
from embedding_ttc.deploy.service import create_app
from embedding_ttc.encoders.base import QUERY
from embedding_ttc.encoders.cache import CachedEncoder
from embedding_ttc.encoders.catalog import DEFAULT_ENCODER, load_encoder
from embedding_ttc.tasks.catalog import load_task
from embedding_ttc.tasks.task import join_title_text

COPY = "def program(Q, D, S, ctx):\n    return S.copy()\n"
"""The program file: P0's computation (the cosine matrix, returned as a new array)."""


def build(work: Path, task_name: str, docs: int, file: bool) -> Path:
    """The index of the task's first ``docs`` documents: P0's, or the program file's."""
    out = work / (f"{task_name}-{docs}-" + ("copy_file" if file else "P0"))
    if (out / "manifest.json").exists():
        return out
    task = load_task(task_name)
    corpus = [
        Document(i, t, b)
        for i, t, b in zip(task.doc_ids, task.doc_titles, task.doc_bodies, strict=True)
    ][:docs]
    path = work / "copy_file.py"
    path.write_text(COPY, encoding="utf-8")
    Index.build(
        out,
        corpus,
        encoder=CachedEncoder(load_encoder(DEFAULT_ENCODER)),
        program=read_deployable(path) if file else "P0",
        reference_queries=sample_texts(task.query_texts, 64, 0),
        reference_source=f"64 of the queries of {task_name} (seed 0)",
        source=f"task:{task_name}-first{docs}",
    )
    return out


def post_seconds(client, route: str, body: dict) -> float:
    """Seconds one request to ``route`` takes (a non-200 answer ends the benchmark)."""
    start = time.perf_counter()
    response = client.post(route, json=body)
    elapsed = time.perf_counter() - start
    if response.status_code != 200:
        raise SystemExit(f"{route} answered {response.status_code}: {response.text[:300]}")
    return elapsed


def medians_ms(clients: dict, route: str, bodies: list[dict]) -> list[float]:
    """Each client's median milliseconds on ``route`` over ``bodies`` (the first two untimed).

    The clients take turns on each request, so a busy moment of the machine falls on both.
    """
    seconds: dict[str, list[float]] = {label: [] for label in clients}
    for i, body in enumerate(bodies):
        for label, client in clients.items():
            elapsed = post_seconds(client, route, body)
            if i >= 2:
                seconds[label].append(elapsed)
    return [1000 * statistics.median(s) for s in seconds.values()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--task", default="scifact", help="the task (default scifact)")
    parser.add_argument("--requests", type=int, default=30)
    args = parser.parse_args()
    from fastapi.testclient import TestClient

    args.work.mkdir(parents=True, exist_ok=True)
    task = load_task(args.task)  # a missing task: its sentence (how to get it), see data_errors
    sizes = tuple(sorted({min(n, len(task.doc_ids)) for n in (100, 1000)}))
    queries = list(task.query_texts[: args.requests + 2])
    # The queries are encoded once, untimed, into the on-disk cache: both indexes then read
    # the same cached query embeddings, and the columns differ by the program's cost alone.
    encoder = CachedEncoder(load_encoder(DEFAULT_ENCODER))
    encoder.encode(queries, view=QUERY)
    clients = {}
    for label, file in (("library P0", False), ("program file", True)):
        index = Index.load(build(args.work, args.task, max(sizes), file))
        clients[label] = TestClient(create_app(Reranker(index, encoder)))
    ids = list(task.doc_ids[: max(sizes)])
    texts = [join_title_text(t, b) for t, b in zip(task.doc_titles, task.doc_bodies, strict=True)]
    header = f"{'route':11s} {'candidates':>10s} {'P0 ms':>8s} {'file ms':>8s} {'ratio':>6s} target"
    print(f"\nmedian of {args.requests} requests; {args.task}, {DEFAULT_ENCODER}")
    print(header)
    print("-" * len(header))
    for n in sizes:
        routes = {
            "/rerank": [{"query": q, "candidates": ids[:n], "k": 10} for q in queries],
            "/v1/rerank": [
                {
                    "query": q,
                    "documents": texts[:n],  # the indexed texts: held, not encoded live
                    "top_n": 10,
                }
                for q in queries
            ],
        }
        for route, requests in routes.items():
            lib, got = medians_ms(clients, route, requests)
            met = "met" if got <= 1.5 * lib + 5 else "MISSED"
            print(f"{route:11s} {n:>10,d} {lib:>8.1f} {got:>8.1f} {got / lib:>6.2f} {met}")


if __name__ == "__main__":
    from data_errors import run

    raise SystemExit(run(main))
