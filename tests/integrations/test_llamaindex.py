"""The LlamaIndex node postprocessor, against llama-index-core itself."""

from __future__ import annotations

import asyncio

import pytest
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, TextNode
from pydantic import ValidationError

from deploy import QUERIES, corpus
from embedding_ttc.deploy.errors import CandidateRequestError
from embedding_ttc.errors import MissingExtraError
from embedding_ttc.integrations.llamaindex import EmbeddingTTCReranker

from . import import_without


def nodes(ids: list[str], **kwargs: object) -> list[NodeWithScore]:
    docs = {d.id: d for d in corpus(8)}
    return [
        NodeWithScore(node=TextNode(id_=i, text=docs[i].joined, **kwargs), score=0.5) for i in ids
    ]


def test_it_is_a_postprocessor_returning_new_scored_nodes(rerankers):
    reranker = rerankers("P0")
    given = nodes(["d3", "d0", "d1", "d7"])
    post = EmbeddingTTCReranker(reranker=reranker, top_n=2)
    assert isinstance(post, BaseNodePostprocessor)
    out = post.postprocess_nodes(given, query_str=QUERIES[0])
    records = [{"id": n.node_id, "text": n.node.get_content()} for n in given]
    want = reranker.rerank_texts(QUERIES[0], records, 2)
    assert [(n.node_id, n.score) for n in out] == [(r.id, r.score) for r in want.results]
    assert all(n.node is given[r.position].node for n, r in zip(out, want.results, strict=True))
    assert [n.score for n in given] == [0.5] * 4  # the caller's nodes are not changed


def test_node_ids_let_held_nodes_use_the_stored_work(rerankers):
    reranker = rerankers("SentMaxSim")
    post = EmbeddingTTCReranker(reranker=reranker, top_n=3)
    before = len(reranker.encoder.calls)
    held = post.postprocess_nodes(nodes(["d0", "d2", "d5"]), query_str=QUERIES[2])
    assert reranker.encoder.calls[before:] == [1]  # the query only
    # Generated ids are not the index's: the same texts are computed live, to the same scores.
    fresh = [NodeWithScore(node=TextNode(text=n.node.get_content())) for n in nodes(["d0", "d2"])]
    fresh.append(nodes(["d5"])[0])
    before = len(reranker.encoder.calls)
    live = post.postprocess_nodes(fresh, query_str=QUERIES[2])
    assert sum(reranker.encoder.calls[before:]) > 1
    assert sorted(n.score for n in live) == pytest.approx(sorted(n.score for n in held), abs=1e-6)


def test_an_id_key_reads_the_id_from_metadata(rerankers):
    reranker = rerankers("P0")
    given = [
        NodeWithScore(node=TextNode(text=n.node.get_content(), metadata={"corpus_id": n.node_id}))
        for n in nodes(["d4", "d1"])
    ]
    post = EmbeddingTTCReranker(reranker=reranker, top_n=2, id_key="corpus_id")
    before = len(reranker.encoder.calls)
    post.postprocess_nodes(given, query_str=QUERIES[1])
    assert reranker.encoder.calls[before:] == [1]  # held under the metadata ids
    bad = [NodeWithScore(node=TextNode(text="a", metadata={"corpus_id": 4}))]
    with pytest.raises(
        CandidateRequestError, match=r"metadata\['corpus_id'\] \(its id\) must be a str"
    ):
        post.postprocess_nodes(bad, query_str=QUERIES[1])


def test_the_text_is_the_content_without_metadata(rerankers):
    reranker = rerankers("P0")
    [node] = nodes(["d0"], metadata={"author": "someone"})
    post = EmbeddingTTCReranker(reranker=reranker, top_n=1)
    [out] = post.postprocess_nodes([node], query_str=QUERIES[0])
    assert out.score == reranker.rerank(QUERIES[0], ["d0"])[0][1]


def test_the_async_form_gives_the_same_nodes(rerankers):
    post = EmbeddingTTCReranker(reranker=rerankers("BM25"), top_n=3)
    given = nodes(["d0", "d1", "d2", "d7"])
    sync = post.postprocess_nodes(given, query_str=QUERIES[3])
    got = asyncio.run(post.apostprocess_nodes(given, query_str=QUERIES[3]))
    assert [(n.node_id, n.score) for n in got] == [(n.node_id, n.score) for n in sync]


def test_from_index_and_serialisation_without_the_reranker(rerankers):
    reranker = rerankers("P0")
    post = EmbeddingTTCReranker.from_index(
        reranker.index.directory, top_n=1, id_key="corpus_id", encoder=reranker.encoder
    )
    assert post.reranker.index.directory == reranker.index.directory
    assert post.to_dict() == {
        "top_n": 1,
        "id_key": "corpus_id",
        "title_key": None,
        "class_name": "EmbeddingTTCReranker",
    }


def test_bad_calls_are_named(rerankers):
    post = EmbeddingTTCReranker(reranker=rerankers("P0"))
    with pytest.raises(ValueError, match="needs the query"):
        post.postprocess_nodes(nodes(["d0"]))
    with pytest.raises(
        CandidateRequestError, match="node 1 must be a llama_index NodeWithScore, got str"
    ):
        post.postprocess_nodes([*nodes(["d0"]), "a text"], query_str="q")  # type: ignore[list-item]
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        EmbeddingTTCReranker(reranker=rerankers("P0"), top_n=0)


def test_without_llamaindex_the_import_says_how_to_install_it(monkeypatch):
    with pytest.raises(
        MissingExtraError, match=r"llama-index-core.*pip install -e '\.\[llamaindex\]'"
    ):
        import_without(monkeypatch, "llama_index", "embedding_ttc.integrations.llamaindex")
