"""``POST /v1/rerank``: the rerank API of Cohere's and Jina's clients, raw and with cohere's."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from embedding_ttc.deploy.index import Index
from embedding_ttc.deploy.reranker import Reranker
from embedding_ttc.deploy.service import MAX_DOCUMENTS, create_app, relevance

from . import QUERIES, corpus
from fakes import HashingEncoder

fastapi = pytest.importorskip("fastapi", reason="the serve extra is part of the dev extra")
from fastapi.testclient import TestClient  # noqa: E402

NEW = "Owls hunt at night. They fly silently over the fields."


@pytest.fixture(scope="module")
def reranker(tmp_path_factory) -> Reranker:
    encoder = HashingEncoder()
    index = Index.build(
        tmp_path_factory.mktemp("v1") / "ix",
        corpus(6),
        encoder=encoder,
        program="SoftCentroid",
        reference_queries=QUERIES,
    )
    return Reranker(index, encoder)


@pytest.fixture(scope="module")
def client(reranker) -> TestClient:
    return TestClient(create_app(reranker))


def documents(reranker: Reranker) -> list:
    held = reranker.index.doc_texts
    return [held[3], {"text": NEW}, held[0], {"text": held[2]}, "Cats purr on the mat."]


def test_v1_rerank_answers_what_rerank_texts_answers(client, reranker):
    docs = documents(reranker)
    response = client.post("/v1/rerank", json={"query": QUERIES[0], "documents": docs})
    assert response.status_code == 200, response.text
    body = response.json()
    expected = reranker.rerank_texts(QUERIES[0], docs, k=len(docs))
    assert [r["index"] for r in body["results"]] == [r.position for r in expected.results]
    assert [r["relevance_score"] for r in body["results"]] == pytest.approx(
        [relevance(r.score) for r in expected.results], abs=1e-6
    )
    scores = [r["relevance_score"] for r in body["results"]]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert all("document" not in r and "raw_score" not in r for r in body["results"])
    assert body["id"]  # as Cohere's v1 answers carry one
    assert body["meta"] == {
        "program": "SoftCentroid",
        "encoder": "fake-hashing",
        "documents": 5,
        "live_documents": 2,
    }


def test_v1_rerank_top_n_and_return_documents(client, reranker):
    docs = documents(reranker)
    texts = [d if isinstance(d, str) else d["text"] for d in docs]
    body = {"query": QUERIES[2], "documents": docs, "top_n": 2, "return_documents": True}
    got = client.post("/v1/rerank", json=body).json()
    assert len(got["results"]) == 2
    for r in got["results"]:
        assert r["document"] == {"text": texts[r["index"]]}
    full = client.post("/v1/rerank", json={**body, "top_n": 50}).json()
    assert len(full["results"]) == 5  # top_n beyond the documents: all of them
    assert full["results"][:2] == got["results"]


@pytest.mark.parametrize("model", [None, "SoftCentroid", "fake-hashing"])
def test_v1_rerank_accepts_the_served_model_names(client, model):
    body = {"query": "q", "documents": ["a b", "c d"], "model": model}
    assert client.post("/v1/rerank", json=body).status_code == 200


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"query": "q", "documents": ["a"], "model": "rerank-v3.5"}, "model 'rerank-v3.5' is not"),
        ({"query": "q", "documents": []}, "body.documents: List should have at least 1 item"),
        ({"query": "q", "documents": ["a", "  "]}, "body.documents.1: document 1 has an empty"),
        ({"query": "q", "documents": ["a", ""]}, "body.documents.1"),
        ({"query": "q", "documents": [{"text": "a", "url": "u"}]}, "url: Extra inputs"),
        ({"query": "q", "documents": ["a"], "top_n": 0}, "body.top_n: Input should be greater"),
        ({"query": "q", "documents": ["a"], "rank_fields": ["t"]}, "name 'text', and optionally"),
        ({"query": "q", "documents": ["a"], "rank_fields": ["title"]}, "rank_fields ['title']"),
        ({"query": "   ", "documents": ["a"]}, "body.query: Value error, the query is blank"),
        ({"query": "q", "documents": [{"text": "a", "id": 3}]}, "documents.0.V1Document.id"),
        ({"documents": ["a"]}, "body.query: Field required"),
        ({"query": "q", "documents": ["a"] * (MAX_DOCUMENTS + 1)}, "body.documents: List should"),
        ({"query": "q", "documents": ["a"], "return_documents": "yes"}, "return_documents"),
    ],
)
def test_v1_rerank_bad_requests_get_a_422_naming_the_problem(client, body, message):
    response = client.post("/v1/rerank", json=body)
    assert response.status_code == 422, response.text
    assert message in response.json()["error"]


def test_v1_records_with_id_and_title_reuse_the_index_s_work(client, reranker):
    """A BEIR-shaped record the index holds (same id, title and text) is not scored live."""
    from . import TEXTS

    held = [{"id": f"d{i}", "title": TEXTS[i][0], "text": TEXTS[i][1]} for i in (4, 1, 0)]
    docs = [*held, {"id": "new-1", "title": "Owls", "text": NEW}]
    body = {"query": QUERIES[2], "documents": docs, "raw_scores": True, "return_documents": True}
    response = client.post("/v1/rerank", json=body)
    assert response.status_code == 200, response.text
    got = response.json()
    expected = reranker.rerank_texts(QUERIES[2], docs, k=len(docs))
    assert got["meta"]["live_documents"] == expected.live == 1
    assert [r["index"] for r in got["results"]] == [r.position for r in expected.results]
    assert [r["raw_score"] for r in got["results"]] == pytest.approx(
        [r.score for r in expected.results], abs=1e-6
    )
    assert [r["document"] for r in got["results"]] == [docs[r["index"]] for r in got["results"]]
    # rank_fields ["text"] ranks on the text alone: the titled records are then other texts.
    text_only = client.post("/v1/rerank", json={**body, "rank_fields": ["text"]}).json()
    assert text_only["meta"]["live_documents"] == 3  # d1 has no title: still held


def test_relevance_is_monotone_into_0_1():
    raw = [-1e6, -40.0, -1.0, -0.03, 0.0, 0.03, 1.0, 3.9, 40.0, 1e6]
    mapped = [relevance(s) for s in raw]
    assert all(0.0 <= m <= 1.0 for m in mapped)
    assert mapped == sorted(mapped)
    assert relevance(0.0) == 0.5
    assert relevance(1.0) == pytest.approx(1 / (1 + 2.718281828459045**-1))


def test_a_body_that_is_not_json_gets_a_400(client):
    for raw in (b'{"query": "q", "documents": ', b"not json at all"):
        response = client.post(
            "/v1/rerank", content=raw, headers={"content-type": "application/json"}
        )
        assert response.status_code == 400, response.text
        assert response.json()["error"].startswith("the body is not valid JSON: ")


def test_v1_rerank_in_the_openapi_schema(client):
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/search", "/rerank", "/v1/rerank", "/health"} <= set(paths)


# --- cohere's client against a real server ------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(reranker):
    """A real uvicorn server of the app on a free local port, in a thread."""
    import uvicorn

    port = _free_port()
    config = uvicorn.Config(create_app(reranker), host="127.0.0.1", port=port, log_level="warning")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(timeout=30)


def test_cohere_client_reranks_against_the_service(server, reranker):
    cohere = pytest.importorskip("cohere", reason="cohere's client is optional for this test")
    co = cohere.Client(api_key="local", base_url=server, max_retries=0, timeout=30)
    docs = [d if isinstance(d, str) else d["text"] for d in documents(reranker)]
    got = co.rerank(query=QUERIES[0], documents=docs, top_n=3, return_documents=True)
    expected = reranker.rerank_texts(QUERIES[0], docs, k=3)
    assert [r.index for r in got.results] == [r.position for r in expected.results]
    assert [r.relevance_score for r in got.results] == pytest.approx(
        [relevance(r.score) for r in expected.results], abs=1e-6
    )
    assert got.id  # v1 answers carry an id too
    assert [r.document.text for r in got.results] == [docs[r.index] for r in got.results]
    with pytest.raises(cohere.core.ApiError) as err:
        co.rerank(query=QUERIES[0], documents=docs, model="rerank-english-v3.0")
    assert err.value.status_code == 422
    assert "is not served here" in str(err.value.body)


def test_cohere_client_v2_reranks_against_the_service(server, reranker):
    cohere = pytest.importorskip("cohere", reason="cohere's client is optional for this test")
    co = cohere.ClientV2(api_key="local", base_url=server, timeout=30)
    docs = [d if isinstance(d, str) else d["text"] for d in documents(reranker)]
    got = co.rerank(model="SoftCentroid", query=QUERIES[0], documents=docs, top_n=3)
    expected = reranker.rerank_texts(QUERIES[0], docs, k=3)
    assert [r.index for r in got.results] == [r.position for r in expected.results]
    assert [r.relevance_score for r in got.results] == pytest.approx(
        [relevance(r.score) for r in expected.results], abs=1e-6
    )
    assert got.id  # v2 answers carry an id
    with pytest.raises(cohere.core.ApiError) as err:
        co.rerank(model="rerank-v3.5", query=QUERIES[0], documents=docs)
    assert err.value.status_code == 422
    assert "is not served here" in str(err.value.body)
    with pytest.raises(cohere.core.ApiError) as err:  # a field with no use here is refused
        co.rerank(model="SoftCentroid", query=QUERIES[0], documents=docs, max_tokens_per_doc=64)
    assert err.value.status_code == 422


def test_v2_refuses_a_request_without_model(reranker):
    client = TestClient(create_app(reranker))
    response = client.post("/v2/rerank", json={"query": "q", "documents": ["a text"]})
    assert response.status_code == 422 and "model" in response.json()["error"]
