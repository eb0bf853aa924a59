"""``serve --workers N``: several processes on one port over one index, stopped by one SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from embedding_ttc.cli.deploy import main as deploy_main
from embedding_ttc.deploy.errors import DeployError
from embedding_ttc.deploy.index import Index
from embedding_ttc.deploy.workers import (
    ENV,
    ServeSettings,
    build_app,
    create_app_from_env,
    worker_app,
)
from embedding_ttc.encoders.catalog import load_encoder

from . import QUERIES, TEXTS, corpus

pytest.importorskip("fastapi", reason="the serve extra is part of the dev extra")
from fastapi.testclient import TestClient

ENCODER = "tokenlearn-static-64"  # loadable by name in every worker


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("workers") / "ix"
    Index.build(out, corpus(), encoder=load_encoder(ENCODER), program="SoftCentroid")
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _request(url: str, body: dict | None = None, timeout: float = 30.0) -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _start(index_dir, port: int, *extra: str) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "embedding_ttc.cli.deploy", "serve", str(index_dir)]
    return subprocess.Popen(
        [*cmd, "--host", "127.0.0.1", "--port", str(port), "--shortlist", "4", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=os.environ.copy(),  # the test's isolated embedding cache
    )


def test_settings_travel_by_environment(index_dir, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    with pytest.raises(DeployError, match=f"{ENV} is not set"):
        create_app_from_env()
    monkeypatch.setenv(ENV, '{"directory": "x", "shortlist": "many"}')
    with pytest.raises(DeployError, match="no valid serve settings"):
        create_app_from_env()
    with pytest.raises(SystemExit) as ended:  # in a worker: uvicorn's startup failure
        worker_app()
    assert ended.value.code == 3
    settings = ServeSettings(directory=index_dir, shortlist=4)
    monkeypatch.setenv(ENV, settings.model_dump_json())
    health = TestClient(create_app_from_env()).get("/health").json()
    assert (health["shortlist"], health["worker"]) == (4, os.getpid())


def test_bad_worker_count_is_refused(index_dir, capsys):
    assert deploy_main(["serve", str(index_dir), "--workers", "0"]) == 2
    assert "--workers must be at least 1" in capsys.readouterr().err


def test_two_workers_answer_as_one_and_stop_on_sigterm(index_dir):
    single = TestClient(build_app(ServeSettings(directory=index_dir, shortlist=4)))
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    proc = _start(index_dir, port, "--workers", "2")
    pids: set[int] = set()
    try:
        deadline = time.monotonic() + 240  # two workers load on a busy machine
        while len(pids) < 2:
            assert proc.poll() is None, proc.communicate()[1].decode()
            assert time.monotonic() < deadline, f"saw only workers {pids}"
            try:
                status, health = _request(f"{base}/health", timeout=5)
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.2)
                continue
            assert (status, health["program"]) == (200, "SoftCentroid")
            pids.add(health["worker"])
        assert proc.pid not in pids
        texts = [text for _, text in TEXTS]
        calls = [("/search", {"query": q, "k": 3}) for q in QUERIES]
        calls += [
            ("/rerank", {"query": q, "candidates": ["d1", "d4", "d6"], "k": 2}) for q in QUERIES
        ]
        calls += [("/v1/rerank", {"query": q, "documents": texts, "top_n": 3}) for q in QUERIES]
        for path, body in calls * 3:  # new connections: both workers answer some
            status, got = _request(f"{base}{path}", body)
            expected = single.post(path, json=body).json()
            got.pop("id", None), expected.pop("id", None)  # /v1's: one per response
            assert (status, got) == (200, expected), path
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    stderr = err.decode()
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr
    assert stderr.count("Finished server process") == 2, stderr
    assert not any(_alive(pid) for pid in pids)  # no orphan worker


@pytest.mark.slow  # about a minute: uvicorn's supervisor gives each worker its start-up time
def test_a_worker_that_cannot_start_stops_the_service(index_dir):
    # The parent never loads the encoder; each worker is asked for a GPU this machine lacks.
    proc = _start(index_dir, _free_port(), "--workers", "2", "--device", "cuda:7")
    try:
        _, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    stderr = err.decode()
    assert proc.returncode == 2, stderr
    assert "a server worker could not start" in stderr
    assert "cuda:7" in stderr  # the worker's own error, logged
