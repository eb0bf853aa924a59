"""The HTTP service: good and malformed requests, the serve extra, a real server process."""

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
from concurrent.futures import ThreadPoolExecutor

import pytest

from embedding_ttc.cli.deploy import main as deploy_main
from embedding_ttc.deploy.index import Index
from embedding_ttc.deploy.reranker import Reranker
from embedding_ttc.deploy.service import MAX_K, MAX_QUERY_CHARS, create_app
from embedding_ttc.encoders.catalog import load_encoder
from embedding_ttc.errors import MissingExtraError

from . import QUERIES, corpus
from fakes import HashingEncoder

fastapi = pytest.importorskip("fastapi", reason="the serve extra is part of the dev extra")
from fastapi.testclient import TestClient  # noqa: E402


@pytest.fixture(scope="module")
def reranker(tmp_path_factory) -> Reranker:
    encoder = HashingEncoder()
    index = Index.build(
        tmp_path_factory.mktemp("svc") / "ix",
        corpus(),
        encoder=encoder,
        program="BidirZScore",
        reference_queries=QUERIES,
    )
    return Reranker(index, encoder)


@pytest.fixture(scope="module")
def client(reranker) -> TestClient:
    return TestClient(create_app(reranker, shortlist=5))


def test_health_and_openapi(client):
    health = client.get("/health").json()
    assert health == {
        "status": "ok",
        "ready": client.get("/ready").status_code == 200,
        "program": "BidirZScore",
        "sandboxed": False,
        "encoder": "fake-hashing",
        "documents": 8,
        "first_stage": "dense",
        "shortlist": 5,
        "worker": os.getpid(),
    }
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/search", "/rerank", "/health"} <= set(paths)


def test_search_and_rerank_answer_what_the_reranker_answers(client, reranker):
    got = client.post("/search", json={"query": "baking bread", "k": 3}).json()
    expected = reranker.search("baking bread", 3, shortlist=5)
    assert got == {"results": [{"id": d, "score": s} for d, s in expected]}
    body = {"query": "sleeping cats", "candidates": ["d1", "d0", "d4"], "k": 2}
    got = client.post("/rerank", json=body).json()
    expected = reranker.rerank("sleeping cats", ["d1", "d0", "d4"], 2)
    assert got == {"results": [{"id": d, "score": s} for d, s in expected]}
    # k defaults to 10 (fewer results when there are fewer candidates).
    one = client.post("/rerank", json={"query": "x", "candidates": ["d1"]}).json()
    assert len(one["results"]) == 1
    # JSON Schema's integers include 2.0.
    assert len(client.post("/search", json={"query": "x", "k": 2.0}).json()["results"]) == 2


BAD = [
    ("/search", {"k": 3}, "body.query: Field required"),
    ("/rerank", {"query": "cats", "k": 3}, "body.candidates: Field required"),
    ("/rerank", {"query": "cats", "candidates": ["d0", "zz"]}, "unknown candidate id 'zz'"),
    ("/rerank", {"query": "cats", "candidates": ["d0", "d0"]}, "'d0' is given twice"),
    ("/rerank", {"query": "cats", "candidates": []}, "body.candidates: List should have at least"),
    ("/search", {"query": "cats", "k": 0}, "body.k: Input should be greater than or equal to 1"),
    ("/search", {"query": "cats", "k": MAX_K + 1}, f"less than or equal to {MAX_K}"),
    ("/search", {"query": "cats", "k": "5"}, "body.k: Input should be a valid integer"),
    ("/search", {"query": "cats", "k": 2.5}, "body.k: Input should be a valid integer"),
    ("/search", {"query": "cats", "k": True}, "body.k: Input should be a valid integer"),
    ("/search", {"query": "x" * (MAX_QUERY_CHARS + 1)}, f"at most {MAX_QUERY_CHARS} characters"),
    ("/search", {"query": ""}, "body.query: String should have at least 1 character"),
    ("/search", {"query": " \t\n "}, "body.query: Value error, the query is blank"),
    ("/rerank", {"query": "  ", "candidates": ["d0"]}, "the query is blank"),
    ("/search", {"query": "cats", "top_k": 3}, "body.top_k: Extra inputs are not permitted"),
    ("/search", b'{"query": "\\ud800 cats"}', "body.query"),  # a lone surrogate
    ("/search", [1, 2], "body: Input should be a valid dictionary"),
]


@pytest.mark.parametrize(("path", "body", "message"), BAD)
def test_bad_requests_get_a_422_naming_the_problem(client, path, body, message):
    if isinstance(body, bytes):
        response = client.post(path, content=body, headers={"content-type": "application/json"})
    else:
        response = client.post(path, json=body)
    assert response.status_code == 422
    payload = response.json()
    assert message in payload["error"]
    assert all({"loc", "msg", "type"} <= set(e) for e in payload["detail"])
    assert all("input" not in e for e in payload["detail"])  # inputs are not echoed back
    # The service keeps serving.
    assert client.post("/search", json={"query": "cats", "k": 1}).status_code == 200


def test_wrong_method_and_path_are_4xx(client):
    assert client.get("/search").status_code == 405
    assert client.post("/nowhere", json={}).status_code == 404


def test_concurrent_requests_agree_with_sequential_ones(client):
    queries = [f"{q} {i}" for i in range(3) for q in QUERIES]
    expected = [client.post("/search", json={"query": q, "k": 4}).json() for q in queries]

    def search(q: str) -> dict:
        return client.post("/search", json={"query": q, "k": 4}).json()

    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(search, queries))
    assert got == expected


def test_missing_serve_extra_names_it(reranker, monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "fastapi", None)  # import fastapi now raises ImportError
    with pytest.raises(MissingExtraError, match=r"pip install -e '\.\[serve\]'"):
        create_app(reranker)
    assert deploy_main(["serve", str(tmp_path / "anything")]) == 2
    assert "pip install -e '.[serve]'" in capsys.readouterr().err


# --- a real server process ---------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("body", [b'{"query": "cats", "k": ', b"not json at all", b"{'k': 1}"])
def test_a_body_that_is_not_json_gets_a_400_naming_the_problem(client, body):
    response = client.post("/search", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert response.json()["error"].startswith("the body is not valid JSON: ")
    assert client.post("/search", json={"query": "cats", "k": 1}).status_code == 200


def _request(url: str, body: dict | None = None, timeout: float = 30.0) -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_serve_subprocess_answers_then_exits_cleanly_on_sigterm(tmp_path):
    encoder = load_encoder("tokenlearn-static-64")  # loadable by name in the child process
    Index.build(tmp_path / "ix", corpus(), encoder=encoder, program="SoftCentroid")
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "embedding_ttc.cli.deploy", "serve", str(tmp_path / "ix")]
    proc = subprocess.Popen(
        [*cmd, "--host", "127.0.0.1", "--port", str(port), "--shortlist", "4", "--preload"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=os.environ.copy(),  # the test's isolated embedding cache
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                status, health = _request(f"{base}/health", timeout=2)
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                assert proc.poll() is None, proc.communicate()[1].decode()
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.2)
        assert (status, health["program"]) == (200, "SoftCentroid")
        # The port opens before the warm-up: /ready says 503, naming what it waits for, then 200.
        while (ready := _request(f"{base}/ready", timeout=2))[0] == 503:
            assert ready[1]["status"] == "warming up" and ready[1]["waiting_for"], ready
            assert time.monotonic() < deadline, "the service did not get ready"
            time.sleep(0.1)
        assert ready == (200, {"status": "ready"})
        status, found = _request(f"{base}/search", {"query": "knight and bishop", "k": 2})
        assert status == 200
        assert len(found["results"]) == 2
        status, bad = _request(f"{base}/rerank", {"query": "q", "candidates": ["nope"]})
        assert status == 422
        assert "unknown candidate id 'nope'" in bad["error"]
        with ThreadPoolExecutor(4) as pool:
            calls = [(f"{base}/search", {"query": q, "k": 3}) for q in QUERIES * 2]
            results = list(pool.map(lambda c: _request(*c), calls))
        assert all(code == 200 for code, _ in results)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    stderr = err.decode()
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr
    assert "Finished server process" in stderr
    assert "warmed up: one query in" in stderr
    assert f"MB of {tmp_path / 'ix'} into the page cache" in stderr


# --- schemathesis ---------------------------------------------------------------------------


@pytest.mark.slow
def test_openapi_fuzzing_finds_no_server_error(reranker):
    """Schemathesis' requests from the OpenAPI schema, valid and invalid, never get a 5xx.

    Driven through Hypothesis directly: schemathesis' pytest plugin does not run under pytest 9.
    """
    schemathesis = pytest.importorskip("schemathesis")
    from hypothesis import HealthCheck, given, settings
    from schemathesis import checks

    reranker.warm_up(shortlist=5)  # as ``serve`` does before its port opens: /ready is then 200
    app = create_app(reranker, shortlist=5)
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    seen: dict[int, int] = {}

    def run(operation, mode) -> None:
        @settings(
            max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck)
        )
        @given(case=operation.as_strategy(generation_mode=mode))
        def fuzz(case):
            response = case.call()
            seen[response.status_code] = seen.get(response.status_code, 0) + 1
            assert response.status_code < 500, (case.as_curl_command(), response.text)
            # Every default check (status codes, content types, response bodies against the
            # schema, invalid data rejected) but one: a schema-valid candidate id may still be
            # unknown to the index, a 422 the schema cannot express.
            case.validate_response(response, excluded_checks=[checks.positive_data_acceptance])

        fuzz()

    for result in schema.get_all_operations():
        operation = result.ok()
        run(operation, schemathesis.GenerationMode.POSITIVE)
        if "requestBody" in operation.definition.raw:  # GETs and POST /admin/reload take none
            run(operation, schemathesis.GenerationMode.NEGATIVE)
    assert seen and max(seen) < 500
    assert 422 in seen and 200 in seen


def test_ready_is_503_until_a_warm_up_query_went_through_and_health_is_liveness(tmp_path):
    encoder = HashingEncoder()
    index = Index.build(tmp_path / "ix", corpus(), encoder=encoder, program="P0")
    reranker = Reranker(index, encoder)
    client = TestClient(create_app(reranker, shortlist=5))
    assert client.get("/health").status_code == 200
    waiting = client.get("/ready")
    assert waiting.status_code == 503
    assert waiting.json() == {"status": "warming up", "waiting_for": "the warm-up"}
    seconds = reranker.warm_up(shortlist=5)
    assert seconds > 0 and reranker.ready
    assert client.get("/ready").json() == {"status": "ready"}


def test_reranker_load_sets_the_threads_asked(tmp_path):
    import torch

    encoder = HashingEncoder()
    Index.build(tmp_path / "ix", corpus(), encoder=encoder, program="P0")
    before = torch.get_num_threads()
    try:
        Reranker.load(tmp_path / "ix", encoder=encoder, threads=1)
        assert torch.get_num_threads() == 1
        with pytest.raises(ValueError, match="at least 1"):
            Reranker.load(tmp_path / "ix", encoder=encoder, threads=0)
    finally:
        torch.set_num_threads(before)
