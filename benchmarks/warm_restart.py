"""A restarted service whose embedding cache is warm: is the first request after /ready fast?

Builds an index (``--program``, default SoftCentroid, over ``--task``'s corpus with the
default encoder), serves it once so that the embedding cache holds everything a start
encodes (the warm-up text included), stops it, and starts it again: the restart. It then times

* how long after the process started ``/health`` first answers (target: within 3 s), and when
  ``/ready`` turns 200;
* the first ``/v1/rerank`` after ``/ready`` (``--documents`` documents of the task, a query of
  its own) against the median of the next ten, each with another query (target: the first
  within 3x that median plus 50 ms).

Printed as a table with the ratio. Data: ``--task`` (default ``legal_summarization``, packaged:
it runs on a fresh clone offline; any other task is read from ``../shared/datasets`` or
``$EMBEDDING_TTC_DATA``, and a missing one ends the run with the sentence saying how to get it).

    .venv/bin/python benchmarks/warm_restart.py --work /tmp/warm-restart
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from embedding_ttc.tasks.catalog import load_task


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _post(url: str, body: dict) -> tuple[int, float]:
    """The status of a POST and its seconds."""
    data = json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    started = time.perf_counter()
    with urllib.request.urlopen(req, timeout=120) as response:
        response.read()
        return response.status, time.perf_counter() - started


def _status(url: str) -> int | None:
    """The status of a GET, or ``None`` when nothing answered within a second."""
    try:
        with urllib.request.urlopen(url, timeout=1) as response:
            return int(response.status)
    except urllib.error.HTTPError as err:
        return err.code
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None


def serve_once(
    index: Path, env: dict[str, str], task_docs: list[str], queries: list[str]
) -> dict[str, float]:
    """Start ``serve``, wait for /ready, time eleven requests, stop it; the timings."""
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "embedding_ttc.cli.deploy", "serve", str(index)]
    started = time.monotonic()
    proc = subprocess.Popen(
        [*cmd, "--port", str(port), "--log-level", "warning"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        health = ready = None
        while ready is None:
            if proc.poll() is not None:
                raise RuntimeError(proc.communicate()[1].decode())
            if time.monotonic() - started > 600:
                raise RuntimeError("the service was not ready within 600 s")
            if health is None and _status(f"{base}/health") == 200:
                health = time.monotonic() - started
            if health is not None and _status(f"{base}/ready") == 200:
                ready = time.monotonic() - started
            time.sleep(0.05)
        times = []
        for query in queries[:11]:
            status, seconds = _post(
                f"{base}/v1/rerank", {"query": query, "documents": task_docs, "top_n": 10}
            )
            if status != 200:
                raise RuntimeError(f"/v1/rerank answered {status}")
            times.append(seconds)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
    return {
        "health_s": health or 0.0,
        "ready_s": ready,
        "first_ms": times[0] * 1000,
        "next_median_ms": statistics.median(times[1:]) * 1000,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="index and embedding cache")
    parser.add_argument("--task", default="legal_summarization", help="default: packaged")
    parser.add_argument("--program", default="SoftCentroid", help="default SoftCentroid")
    parser.add_argument("--documents", type=int, default=100, help="per request (default 100)")
    args = parser.parse_args()
    task = load_task(args.task)  # a missing task: its sentence (how to get it)
    args.work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "EMBEDDING_TTC_CACHE": str(args.work / "cache"), "HF_HUB_OFFLINE": "1"}
    index = args.work / f"{args.task}-{args.program}"
    if not (index / "manifest.json").exists():
        build = [sys.executable, "-m", "embedding_ttc.cli.deploy", "index", "build"]
        build += ["--task", args.task, "--program", args.program, "--out", str(index)]
        subprocess.run([*build, "--no-progress", "--force"], env=env, check=True)
    docs = task.doc_texts[: args.documents]
    queries = list(task.query_texts)
    first = serve_once(index, env, docs, queries[11:22])  # fills the cache (warm-up, queries)
    again = serve_once(index, env, docs, queries[:11])  # the restart: the cache is warm
    print(f"\n{args.task}, {args.program}, {len(docs)} documents a /v1/rerank request")
    header = (
        f"{'start':8s} {'/health s':>9s} {'/ready s':>8s} {'first ms':>9s} "
        f"{'next 10 ms':>10s} {'ratio':>6s} target"
    )
    print(header)
    print("-" * len(header))
    for label, t in (("first", first), ("restart", again)):
        ratio = t["first_ms"] / t["next_median_ms"]
        met = t["first_ms"] <= 3 * t["next_median_ms"] + 50 and t["health_s"] <= 3.0
        print(
            f"{label:8s} {t['health_s']:>9.2f} {t['ready_s']:>8.2f} {t['first_ms']:>9.1f} "
            f"{t['next_median_ms']:>10.1f} {ratio:>6.2f} {'met' if met else 'MISSED'}"
        )
    return 0


if __name__ == "__main__":
    from data_errors import run

    raise SystemExit(run(main))
