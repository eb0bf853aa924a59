"""Load test of ``embedding-ttc serve`` on loopback: latency percentiles and throughput.

For each program (default P0, SoftCentroid, LexicalHybridRRF) the index of one task is served
by a child process (``python -m embedding_ttc.cli.deploy serve``, uncached query encoder,
warning-level logs); after a short warm-up, a bounded number of ``POST /search`` requests (the
task's queries, cycled; ``k`` = 10, the server's dense shortlist of 100) go out from
``--concurrency`` client threads. Printed per program and number of server workers
(``--workers 1 2``: ``serve --workers N``, each worker its own process over the memory-mapped
index; ``--retain-memory-mb 0 256``: one server per value of ``serve --retain-memory-mb``):
requests, errors, p50 / p95 / max latency and throughput. The server is then stopped
with SIGTERM and must exit with status 0.

``--endpoint v1`` sends the rerank shape instead, ``POST /v1/rerank {"query", "documents":
[texts], "top_n": 10}``: each request carries ``--documents`` of the task's documents (a window
moving through the corpus, texts as the index joins them, so their stored work is used).

``--schemathesis N`` also runs the schemathesis CLI (every check, N examples per operation)
against the first program's server and reports whether it found a server error.

Indexes are taken from (or built under) ``--work``, as in ``rerank_latency.py``.

    .venv/bin/python benchmarks/serve_load.py --work /tmp/deploy-bench --requests 200
    .venv/bin/python benchmarks/serve_load.py --work /tmp/deploy-bench --programs SoftCentroid \
        --endpoint v1 --workers 1 2
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rerank_latency import ensure_index

from embedding_ttc.cli.deploy import set_threads
from embedding_ttc.deploy.allocator import DEFAULT_RETAIN_MB
from embedding_ttc.encoders.catalog import DEFAULT_ENCODER
from embedding_ttc.tasks.catalog import load_task
from embedding_ttc.tasks.task import join_title_text


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def post(url: str, body: dict[str, object], timeout: float = 300.0) -> tuple[int, float]:
    """Status code and seconds of one request."""
    data = json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:
            response.read()
            status = response.status
    except urllib.error.HTTPError as err:
        status = err.code
    return status, time.perf_counter() - start


def start_server(
    index: Path,
    port: int,
    threads: int,
    workers: int = 1,
    first_stage: str = "dense",
    preload: bool = False,
    retain_mb: int | None = None,
) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "embedding_ttc.cli.deploy", "serve", str(index)]
    cmd += ["--port", str(port), "--no-cache", "--log-level", "warning"]
    cmd += ["--threads", str(threads), "--workers", str(workers), "--first-stage", first_stage]
    cmd += ["--preload"] if preload else []
    cmd += [] if retain_mb is None else ["--retain-memory-mb", str(retain_mb)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:  # the port opens at once: /ready is 503 (an HTTPError) until the warm-up ends
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/ready", timeout=2):
                return proc
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            if proc.poll() is not None:
                raise RuntimeError(proc.communicate()[1].decode()) from None
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError("the server did not start within 300 s")


def stop_server(proc: subprocess.Popen[bytes]) -> tuple[int, bool]:
    """SIGTERM, then the exit status and whether stderr holds a traceback."""
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, "Traceback" in err.decode()


def schemathesis_run(port: int, examples: int) -> None:
    exe = shutil.which("schemathesis") or str(Path(sys.executable).with_name("schemathesis"))
    cmd = [exe, "run", f"http://127.0.0.1:{port}/openapi.json", "--checks", "all"]
    cmd += ["--exclude-checks", "positive_data_acceptance", "-n", str(examples), "--seed", "0"]
    # positive_data_acceptance is left out: a schema-valid candidate id can still be unknown
    # to the index (a 422 the schema cannot express).
    print("$", " ".join(cmd), flush=True)
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    tail = "\n".join(done.stdout.strip().splitlines()[-12:])
    print(tail)
    server_errors = "Server error" in done.stdout or "ST100" in done.stdout
    print(f"schemathesis exit status {done.returncode}; server errors found: {server_errors}")


def request_bodies(args: argparse.Namespace) -> tuple[str, list[dict[str, object]]]:
    """The path and the ``--requests`` bodies of ``--endpoint``, the task's queries cycled."""
    task = load_task(args.task)
    queries = list(task.query_texts)
    if args.endpoint == "search":
        return "/search", [
            {"query": queries[j % len(queries)], "k": 10} for j in range(args.requests)
        ]
    texts = [join_title_text(t, b) for t, b in zip(task.doc_titles, task.doc_bodies, strict=True)]
    texts = texts[: args.docs] if args.docs else texts
    n = min(args.documents, len(texts))
    bodies: list[dict[str, object]] = []
    for j in range(args.requests):
        start = (j * n) % len(texts)
        window = (texts[start:] + texts[:start])[:n]
        bodies.append({"query": queries[j % len(queries)], "documents": window, "top_n": 10})
    return "/v1/rerank", bodies


def load(args: argparse.Namespace) -> None:
    path, bodies = request_bodies(args)
    header = (
        f"{'program':18s} {'workers':>7s} {'retain MB':>9s} {'requests':>8s} {'errors':>6s} "
        f"{'p50 ms':>8s} {'p95 ms':>8s} {'max ms':>8s} {'req/s':>6s} {'exit':>4s}"
    )
    shape = "k=10" if path == "/search" else f"{args.documents} documents, top_n=10"
    print(f"\nPOST {path}, {shape}, concurrency {args.concurrency}, {args.task} queries")
    print(header)
    print("-" * len(header))
    first = True
    for program in args.programs:
        index = ensure_index(args.work, args.task, args.encoder, program, args.docs)
        for workers, retain in [(w, r) for w in args.workers for r in args.retain_memory_mb]:
            port = free_port()
            proc = start_server(index, port, args.threads, workers, retain_mb=retain)
            url = f"http://127.0.0.1:{port}{path}"
            try:
                for body in bodies[: args.concurrency * workers]:  # warm-up
                    post(url, body)
                start = time.perf_counter()
                with ThreadPoolExecutor(args.concurrency) as pool:
                    results = list(pool.map(post, [url] * len(bodies), bodies))
                wall = time.perf_counter() - start
                if first and args.schemathesis:
                    schemathesis_run(port, args.schemathesis)
                first = False
            finally:
                code, traceback = stop_server(proc)
            times = sorted(t for _, t in results)
            errors = sum(1 for s, _ in results if s != 200)
            p50 = statistics.median(times)
            p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
            print(
                f"{program:18s} {workers:7d} {retain:9d} {len(results):8d} {errors:6d} "
                f"{1e3 * p50:8.1f} {1e3 * p95:8.1f} {1e3 * times[-1]:8.1f} "
                f"{len(results) / wall:6.2f} {code:4d}{' traceback!' if traceback else ''}",
                flush=True,
            )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="folder of the indexes")
    parser.add_argument("--task", default="scifact")
    parser.add_argument("--encoder", default=DEFAULT_ENCODER)
    parser.add_argument("--programs", nargs="+", default=["P0", "SoftCentroid", "LexicalHybridRRF"])
    parser.add_argument("--docs", type=int, help="index only the task's first N documents")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--schemathesis", type=int, default=0, metavar="N")
    parser.add_argument("--threads", type=int, default=1, help="each worker's torch threads")
    parser.add_argument(
        "--workers", type=int, nargs="+", default=[1], metavar="N", help="server processes"
    )
    parser.add_argument(
        "--endpoint",
        choices=("search", "v1"),
        default="search",
        help="POST /search, or /v1/rerank with the rerank shape",
    )
    parser.add_argument("--documents", type=int, default=20, help="documents per v1 request")
    parser.add_argument(
        "--retain-memory-mb",
        type=int,
        nargs="+",
        default=[DEFAULT_RETAIN_MB],
        metavar="MB",
        help="serve --retain-memory-mb, one server per value (0: the C library's default)",
    )
    args = parser.parse_args(argv)
    set_threads(args.threads)  # for index builds in this process
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    load(args)
    return 0


if __name__ == "__main__":
    from data_errors import run

    raise SystemExit(run(main))
