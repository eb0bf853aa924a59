"""A running ``serve`` on loopback while its index grows: concurrent clients see no 5xx.

The in-process tests (``test_live_index``) swap versions under a test client; this one is the
deployment as it runs: ``serve`` in its own process behind uvicorn on 127.0.0.1, four client
threads over real HTTP, and ``index add`` run as the command, first killed with SIGKILL
midway (the service keeps answering from the last complete version), then run to the end
(its documents answer within seconds). Bounded: at most :data:`MAX_REQUESTS` requests and
:data:`DEADLINE` seconds.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
from concurrent.futures import ThreadPoolExecutor

import pytest

from embedding_ttc.deploy.index import Index
from embedding_ttc.encoders.catalog import load_encoder

from . import QUERIES, corpus
from .test_workers import ENCODER, _free_port, _request

pytest.importorskip("fastapi", reason="the serve extra is part of the dev extra")

MAX_REQUESTS = 5000
DEADLINE = 180.0


def _add_command(index_dir, corpus_file) -> list[str]:
    cli = [sys.executable, "-m", "embedding_ttc.cli.deploy", "index", "add", str(index_dir)]
    return [*cli, "--corpus", str(corpus_file)]


def _write_corpus(path, docs) -> None:
    with path.open("w", encoding="utf-8") as out:
        for doc_id, title, text in docs:
            out.write(json.dumps({"_id": doc_id, "title": title, "text": text}) + "\n")


@pytest.mark.slow  # about half a minute: a served process, two index adds, 4 clients
def test_serve_keeps_answering_while_an_add_is_killed_and_answers_a_completed_one(tmp_path):
    index_dir = tmp_path / "ix"
    Index.build(index_dir, corpus(), encoder=load_encoder(ENCODER), program="SoftCentroid")
    big = tmp_path / "big.jsonl"  # long enough to be killed midway
    _write_corpus(big, [(f"bulk{i}", "", f"bulk text number {i} " * 40) for i in range(20000)])
    small = tmp_path / "owls.jsonl"
    _write_corpus(small, [("new001", "Owls", "Owls hunt at night over the fields.")])
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    log = (tmp_path / "serve.log").open("wb")  # a pipe nobody reads would fill and block it
    serve = [sys.executable, "-m", "embedding_ttc.cli.deploy", "serve", str(index_dir)]
    proc = subprocess.Popen(
        [*serve, "--host", "127.0.0.1", "--port", str(port), "--shortlist", "4"],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=os.environ.copy(),  # the test's isolated embedding cache
    )
    statuses: list[int] = []
    stop = threading.Event()
    started = time.monotonic()

    def hammer(worker: int) -> None:
        i = worker
        while not stop.is_set() and len(statuses) < MAX_REQUESTS:
            status, _ = _request(f"{base}/search", {"query": QUERIES[i % 4], "k": 3})
            statuses.append(status)
            i += 1

    try:
        while True:  # the port opens at once; /ready answers 503 until the warm-up ends
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()
            assert time.monotonic() - started < DEADLINE, "serve never became ready"
            try:
                if _request(f"{base}/ready", timeout=5)[0] == 200:
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.2)
        with ThreadPoolExecutor(4) as pool:
            for worker in range(4):
                pool.submit(hammer, worker)
            killed = subprocess.Popen(_add_command(index_dir, big), stderr=subprocess.PIPE)
            time.sleep(3.0)  # reading, encoding or writing its segment: midway in any case
            assert killed.poll() is None, "the bulk add ended before it could be killed"
            killed.send_signal(signal.SIGKILL)
            killed.wait(timeout=30)
            time.sleep(1.5)  # a watcher would have swapped by now, had anything been published
            assert _request(f"{base}/health")[1]["documents"] == 8
            done = subprocess.run(
                _add_command(index_dir, small), capture_output=True, text=True, timeout=DEADLINE
            )
            assert done.returncode == 0, done.stderr
            added = time.monotonic()
            while True:
                status, body = _request(
                    f"{base}/rerank", {"query": "owls at night", "candidates": ["new001", "d0"]}
                )
                if status == 200:
                    break
                assert "unknown candidate id 'new001'" in body["error"], body
                assert time.monotonic() - added < 10, "the added document never answered"
                time.sleep(0.05)
            waited = time.monotonic() - added
            time.sleep(0.5)
            stop.set()
        assert body["results"][0]["id"] == "new001"
        assert _request(f"{base}/health")[1]["documents"] == 9
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        stop.set()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
    print(f"{len(statuses)} requests; added documents answered {waited:.2f} s after index add")
    assert statuses and set(statuses) == {200}, sorted(set(statuses))
    assert len(statuses) > 20  # requests ran through the kill and the swap
    assert proc.returncode == 0 and "Traceback" not in (tmp_path / "serve.log").read_text()
