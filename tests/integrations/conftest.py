"""Deployed indexes over the small hand-written corpus of the deploy tests."""

from __future__ import annotations

import pytest

from deploy import QUERIES, corpus
from embedding_ttc.deploy.index import Index
from embedding_ttc.deploy.reranker import Reranker

from fakes import HashingEncoder


@pytest.fixture(scope="package")
def rerankers(tmp_path_factory):
    """Per program: a reranker over the index of the first 6 documents (d6, d7 left out).

    Each has its own encoder, so a test can see what a call encoded (``encoder.calls``).
    """
    root = tmp_path_factory.mktemp("integrations")
    built: dict[str, Reranker] = {}

    def get(program: str) -> Reranker:
        if program not in built:
            encoder = HashingEncoder()
            index = Index.build(
                root / program,
                corpus(6),
                encoder=encoder,
                program=program,
                reference_queries=QUERIES,
            )
            built[program] = Reranker(index, encoder)
        return built[program]

    return get
