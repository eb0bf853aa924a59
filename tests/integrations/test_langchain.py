"""The LangChain document compressor, against langchain-core itself."""

from __future__ import annotations

import asyncio
import copy

import pytest
from langchain_core.documents import BaseDocumentCompressor, Document
from pydantic import ValidationError

from deploy import QUERIES, corpus
from embedding_ttc.deploy.errors import CandidateRequestError
from embedding_ttc.errors import MissingExtraError
from embedding_ttc.integrations.langchain import EmbeddingTTCReranker

from . import import_without


def documents(ids: list[str], **metadata: object) -> list[Document]:
    docs = {d.id: d for d in corpus(8)}
    return [
        Document(page_content=docs[i].joined, metadata={"source": f"s-{i}", **metadata}, id=i)
        for i in ids
    ]


def test_it_is_a_langchain_compressor_returning_scored_copies(rerankers):
    reranker = rerankers("P0")
    given = documents(["d3", "d0", "d1", "d6"])
    kept = copy.deepcopy(given)
    compressor = EmbeddingTTCReranker(reranker=reranker, top_n=2)
    assert isinstance(compressor, BaseDocumentCompressor)
    out = compressor.compress_documents(given, QUERIES[0])
    want = reranker.rerank_texts(
        QUERIES[0], [{"id": d.id, "text": d.page_content} for d in given], 2
    )
    assert [d.id for d in out] == [r.id for r in want.results]
    for doc, r in zip(out, want.results, strict=True):
        original = given[r.position]
        assert doc.page_content == original.page_content
        assert doc.metadata == {**original.metadata, "relevance_score": r.score}
    assert given == kept  # the caller's documents are not changed


def test_document_ids_let_held_documents_use_the_stored_work(rerankers):
    reranker = rerankers("SentMaxSim")
    compressor = EmbeddingTTCReranker(reranker=reranker, top_n=3)
    before = len(reranker.encoder.calls)
    compressor.compress_documents(documents(["d0", "d2", "d5"]), QUERIES[2])
    assert reranker.encoder.calls[before:] == [1]  # the query only


def test_an_id_key_reads_the_id_from_metadata(rerankers):
    reranker = rerankers("P0")
    docs = [
        Document(page_content=d.page_content, metadata={"corpus_id": d.id}, id=f"uuid-{i}")
        for i, d in enumerate(documents(["d4", "d1"]))
    ]
    compressor = EmbeddingTTCReranker(reranker=reranker, top_n=2, id_key="corpus_id")
    before = len(reranker.encoder.calls)
    out = compressor.compress_documents(docs, QUERIES[1])
    assert reranker.encoder.calls[before:] == [1]  # held under the metadata ids
    assert {d.id for d in out} == {"uuid-0", "uuid-1"}  # the documents' own ids kept
    bad = [Document(page_content="a", metadata={"corpus_id": 4})]
    with pytest.raises(
        CandidateRequestError, match=r"metadata\['corpus_id'\] \(its id\) must be a str"
    ):
        compressor.compress_documents(bad, QUERIES[1])


def test_a_title_key_joins_the_title_as_the_index_did(rerankers):
    reranker = rerankers("P0")
    d0 = corpus(1)[0]
    titled = Document(page_content=d0.text, metadata={"title": d0.title}, id="d0")
    compressor = EmbeddingTTCReranker(reranker=reranker, top_n=1, title_key="title")
    before = len(reranker.encoder.calls)
    [out] = compressor.compress_documents([titled], QUERIES[0])
    assert reranker.encoder.calls[before:] == [1]  # held: the joined text is d0's
    assert out.metadata["relevance_score"] == reranker.rerank("sleeping cats", ["d0"])[0][1]


def test_the_async_form_gives_the_same_documents(rerankers):
    compressor = EmbeddingTTCReranker(reranker=rerankers("BM25"), top_n=3)
    given = documents(["d0", "d1", "d2", "d7"])
    sync = compressor.compress_documents(given, QUERIES[3])
    assert asyncio.run(compressor.acompress_documents(given, QUERIES[3])) == sync


def test_from_index_opens_a_built_index(rerankers):
    reranker = rerankers("P0")
    compressor = EmbeddingTTCReranker.from_index(
        reranker.index.directory, top_n=1, encoder=reranker.encoder
    )
    given = documents(["d0", "d5"])
    assert compressor.compress_documents(given, QUERIES[0]) == EmbeddingTTCReranker(
        reranker=reranker, top_n=1
    ).compress_documents(given, QUERIES[0])


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"top_n": 0}, "greater than or equal to 1"),
        ({"top_n": True}, "valid integer"),
        ({"topn": 3}, "Extra inputs are not permitted"),
    ],
)
def test_bad_settings_are_named(rerankers, settings, message):
    with pytest.raises(ValidationError, match=message):
        EmbeddingTTCReranker(reranker=rerankers("P0"), **settings)


def test_bad_documents_are_named(rerankers):
    compressor = EmbeddingTTCReranker(reranker=rerankers("P0"))
    with pytest.raises(
        CandidateRequestError, match="document 1 must be a langchain_core Document, got str"
    ):
        compressor.compress_documents([*documents(["d0"]), "a text"], "q")  # type: ignore[list-item]
    with pytest.raises(TypeError, match="the query must be a string, got int"):
        compressor.compress_documents(documents(["d0"]), 3)  # type: ignore[arg-type]


def test_without_langchain_the_import_says_how_to_install_it(monkeypatch):
    with pytest.raises(
        MissingExtraError, match=r"langchain-core.*pip install -e '\.\[langchain\]'"
    ):
        import_without(monkeypatch, "langchain_core", "embedding_ttc.integrations.langchain")


def test_the_documented_retriever_route_works(rerankers):
    """``ContextualCompressionRetriever`` over a base retriever, as docs/deploy.md shows it."""
    from langchain_classic.retrievers import ContextualCompressionRetriever
    from langchain_core.retrievers import BaseRetriever

    given = documents(["d3", "d0", "d1", "d6"])

    class Fixed(BaseRetriever):
        def _get_relevant_documents(self, query, *, run_manager):
            return list(given)

    reranker = rerankers("P0")
    retriever = ContextualCompressionRetriever(
        base_compressor=EmbeddingTTCReranker(reranker=reranker, top_n=2), base_retriever=Fixed()
    )
    out = retriever.invoke(QUERIES[0])
    want = reranker.rerank_texts(
        QUERIES[0], [{"id": d.id, "text": d.page_content} for d in given], 2
    )
    assert [d.id for d in out] == [r.id for r in want.results]
