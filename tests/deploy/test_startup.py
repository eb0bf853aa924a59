"""Readiness that means ready: the warm-up runs the model, the port opens first, a busy port
fails before anything loads."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest

from embedding_ttc.deploy.index import Index
from embedding_ttc.deploy.reranker import Reranker
from embedding_ttc.deploy.service import create_app, listen
from embedding_ttc.deploy.startup import Startup, StartupPlan
from embedding_ttc.encoders.base import QUERY
from embedding_ttc.encoders.cache import CachedEncoder
from embedding_ttc.errors import EmbeddingTTCError

from . import corpus
from fakes import HashingEncoder

fastapi = pytest.importorskip("fastapi", reason="the serve extra is part of the dev extra")
from fastapi.testclient import TestClient  # noqa: E402


def _warm_up_query(index: Index) -> str:
    return " ".join(index.texts([0])[0].split()[:16])


def test_the_warm_up_runs_the_encoder_itself_when_the_cache_holds_its_text(tmp_path):
    """After a restart the cache holds the warm-up text; the model must run all the same."""
    model = HashingEncoder()
    cached = CachedEncoder(model, tmp_path / "cache")
    index = Index.build(tmp_path / "ix", corpus(), encoder=cached, program="P0")
    cached.encode([_warm_up_query(index)], view=QUERY)  # the previous run's warm-up, cached
    again = len(model.calls)
    cached.encode([_warm_up_query(index)], view=QUERY)
    assert len(model.calls) == again  # answered from the cache, the model not called
    reranker = Reranker(index, cached)
    reranker.warm_up(shortlist=5)
    assert reranker.ready
    assert model.calls[again:][:1] == [1]  # the model itself encoded the warm-up query


def test_an_app_of_a_startup_is_alive_at_once_and_ready_after_the_warm_up(tmp_path):
    encoder = HashingEncoder()
    index = Index.build(tmp_path / "ix", corpus(), encoder=encoder, program="SoftCentroid")
    plan = StartupPlan(load=lambda: Reranker(index, encoder), shortlist=5, watch=False)
    lines: list[str] = []
    startup = Startup(index, plan, report=lines.append)
    client = TestClient(create_app(startup, shortlist=5))
    health = client.get("/health")
    assert health.status_code == 200 and health.json()["ready"] is False
    assert health.json()["documents"] == 8
    waiting = client.get("/ready")
    assert waiting.status_code == 503
    assert waiting.json() == {"status": "warming up", "waiting_for": "the start of the warm-up"}
    early = client.post("/search", json={"query": "cats", "k": 2})
    assert early.status_code == 503 and early.json()["error"].startswith("not ready: ")
    startup.run()
    assert client.get("/ready").json() == {"status": "ready"}
    assert client.get("/health").json()["ready"] is True
    assert client.post("/search", json={"query": "cats", "k": 2}).status_code == 200
    assert len(lines) == 1 and lines[0].startswith("warmed up: one query in ")


def test_a_startup_that_fails_says_why(tmp_path):
    encoder = HashingEncoder()
    index = Index.build(tmp_path / "ix", corpus(), encoder=encoder, program="P0")

    def load() -> Reranker:
        raise OSError("no such model")

    startup = Startup(index, StartupPlan(load=load))
    seen: list[BaseException] = []
    startup.start(on_failure=seen.append).join(timeout=30)
    assert [str(e) for e in seen] == ["no such model"]
    assert startup.waiting_for == "startup failed: no such model"
    client = TestClient(create_app(startup))
    assert client.get("/ready").json()["waiting_for"] == "startup failed: no such model"


def test_listen_names_a_busy_port():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(
            EmbeddingTTCError, match=rf"cannot listen on 127.0.0.1:{port}: .*in use"
        ):
            listen("127.0.0.1", port)


def test_serve_on_a_busy_port_exits_before_loading_anything(tmp_path):
    encoder = HashingEncoder()
    Index.build(tmp_path / "ix", corpus(), encoder=encoder, program="P0")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "embedding_ttc.cli.deploy", "serve", str(tmp_path / "ix"),
             "--port", str(port)],
            capture_output=True, text=True, timeout=120, env=os.environ.copy(),
        )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert f"error: cannot listen on 127.0.0.1:{port}: Address already in use" in done.stderr
    # Nothing was loaded or announced: the index (of an encoder no process could load by
    # name, fake-hashing) was not even opened, and no line says "serving".
    assert "serving" not in done.stderr and "warmed up" not in done.stderr
    assert time.monotonic() - started < 60


def test_serve_whose_encoder_cannot_load_stops_with_its_error(tmp_path):
    encoder = HashingEncoder()  # a test double no other process can load by its name
    Index.build(tmp_path / "ix", corpus(), encoder=encoder, program="P0")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    done = subprocess.run(
        [sys.executable, "-m", "embedding_ttc.cli.deploy", "serve", str(tmp_path / "ix"),
         "--port", str(port)],
        capture_output=True, text=True, timeout=120, env=os.environ.copy(),
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "error: the service could not start: " in done.stderr
    assert "fake-hashing" in done.stderr
    assert "Traceback" not in done.stderr
