"""A served index grows while it serves: a published version is swapped in between requests."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from embedding_ttc.deploy.corpus import Document
from embedding_ttc.deploy.index import Index
from embedding_ttc.deploy.live_index import LiveIndex
from embedding_ttc.deploy.manifest import MANIFEST
from embedding_ttc.deploy.reranker import Reranker

from . import QUERIES, corpus
from fakes import HashingEncoder

pytest.importorskip("fastapi", reason="the serve extra is part of the dev extra")
from fastapi.testclient import TestClient

from embedding_ttc.deploy.service import create_app

NEW = Document("new001", "Owls", "Owls hunt at night. They fly silently over the fields.")


def served(tmp_path, program: str = "BidirZScore") -> tuple[Index, HashingEncoder, LiveIndex]:
    encoder = HashingEncoder()
    index = Index.build(
        tmp_path / "ix", corpus(), encoder=encoder, program=program, reference_queries=QUERIES
    )
    reranker = Reranker(index, encoder)
    reranker.warm_up(shortlist=5)
    return index, encoder, LiveIndex(reranker)


def test_reload_swaps_in_added_documents_without_a_restart(tmp_path):
    index, encoder, live = served(tmp_path)
    client = TestClient(create_app(live, shortlist=5))
    before = client.post("/rerank", json={"query": "owls at night", "candidates": ["new001"]})
    assert before.status_code == 422 and "unknown candidate id 'new001'" in before.json()["error"]
    assert client.post("/admin/reload").json() == {"swapped": False, "documents": 8, "error": ""}
    index.add([NEW], encoder=encoder)
    assert client.post("/admin/reload").json() == {"swapped": True, "documents": 9, "error": ""}
    after = client.post("/rerank", json={"query": "owls at night", "candidates": ["new001", "d0"]})
    assert after.status_code == 200 and after.json()["results"][0]["id"] == "new001"
    assert client.get("/health").json()["documents"] == 9


def test_a_watching_service_answers_added_documents_within_seconds_under_load(tmp_path):
    index, encoder, live = served(tmp_path)
    client = TestClient(create_app(live, shortlist=5))
    live.watch(interval=0.1)
    statuses: list[int] = []
    stop = threading.Event()

    def hammer() -> None:
        while not stop.is_set():
            r = client.post("/search", json={"query": QUERIES[len(statuses) % 4], "k": 3})
            statuses.append(r.status_code)

    try:
        with ThreadPoolExecutor(4) as pool:
            for _ in range(4):
                pool.submit(hammer)
            time.sleep(0.3)
            index.add([NEW], encoder=encoder)
            added = time.monotonic()
            while True:
                r = client.post("/rerank", json={"query": "owls", "candidates": ["new001"]})
                if r.status_code == 200:
                    break
                assert time.monotonic() - added < 10, "the added document never answered"
                time.sleep(0.05)
            waited = time.monotonic() - added
            time.sleep(0.3)
            stop.set()
    finally:
        live.stop()
    print(f"added documents answered {waited:.2f} s after index add returned")
    assert waited < 10
    assert statuses and all(s == 200 for s in statuses), sorted(set(statuses))
    assert len(statuses) > 10  # requests ran throughout the swap


def test_a_broken_new_version_is_not_swapped_in_and_the_old_keeps_answering(tmp_path):
    _, _, live = served(tmp_path)
    client = TestClient(create_app(live, shortlist=5))
    manifest = tmp_path / "ix" / MANIFEST
    manifest.write_text(manifest.read_text().replace('"documents"', '"documents_x"', 1))
    done = client.post("/admin/reload").json()
    assert done["swapped"] is False and done["documents"] == 8 and done["error"]
    again = client.post("/admin/reload").json()  # the same broken version is not retried
    assert again == {
        "swapped": False,
        "documents": 8,
        "error": "the published version failed to load",
    }
    assert client.post("/search", json={"query": "chess moves", "k": 2}).status_code == 200
