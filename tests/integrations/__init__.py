"""Tests of embedding_ttc.integrations, against the real frameworks.

Each adapter is driven through a harness that speaks one language: a query and a shortlist of
:class:`Item` (id or none, title, text) in, the ranked ``(position, score)`` pairs out. The
contract tests run every harness through the same checks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from embedding_ttc.deploy.reranker import Reranker


@dataclass(frozen=True)
class Item:
    """A first-stage result as a framework carries it."""

    id: str | None
    title: str
    text: str


Ranked = list[tuple[int, float]]
"""``(position in the shortlist, score)``, best first."""


def run_langchain(reranker: Reranker, query: str, items: Sequence[Item], top_n: int) -> Ranked:
    from langchain_core.documents import Document

    from embedding_ttc.integrations.langchain import EmbeddingTTCReranker

    docs = [
        Document(page_content=it.text, metadata={"title": it.title, "pos": i}, id=it.id)
        for i, it in enumerate(items)
    ]
    compressor = EmbeddingTTCReranker(reranker=reranker, top_n=top_n, title_key="title")
    out = compressor.compress_documents(docs, query)
    return [(d.metadata["pos"], d.metadata["relevance_score"]) for d in out]


def run_llamaindex(reranker: Reranker, query: str, items: Sequence[Item], top_n: int) -> Ranked:
    from llama_index.core.schema import NodeWithScore, TextNode

    from embedding_ttc.integrations.llamaindex import EmbeddingTTCReranker

    # A node always has an id; one without an index id carries it nowhere LlamaIndex looks,
    # so the harness reads ids from metadata (absent there = no id).
    nodes = [
        NodeWithScore(
            node=TextNode(
                text=it.text,
                metadata={"title": it.title, **({"corpus_id": it.id} if it.id else {})},
            ),
            score=1.0 / (i + 1),
        )
        for i, it in enumerate(items)
    ]
    post = EmbeddingTTCReranker(
        reranker=reranker, top_n=top_n, id_key="corpus_id", title_key="title"
    )
    out = post.postprocess_nodes(nodes, query_str=query)
    where = {id(n.node): i for i, n in enumerate(nodes)}
    return [(where[id(n.node)], n.score) for n in out]


def run_pyterrier(reranker: Reranker, query: str, items: Sequence[Item], top_n: int) -> Ranked:
    import pandas as pd

    from embedding_ttc.integrations.pyterrier import EmbeddingTTCReranker

    frame = pd.DataFrame(
        {
            "qid": ["q1"] * len(items),
            "query": [query] * len(items),
            "docno": [it.id for it in items],
            "title": [it.title for it in items],
            "text": [it.text for it in items],
            "pos": list(range(len(items))),
            "score": [float(len(items) - i) for i in range(len(items))],  # the first stage's
            "rank": list(range(len(items))),
        },
        columns=["qid", "query", "docno", "title", "text", "pos", "score", "rank"],
    )
    out = (EmbeddingTTCReranker(reranker) % top_n).transform(frame)
    assert out["rank"].tolist() == list(range(len(out)))
    return [(int(p), float(s)) for p, s in zip(out["pos"], out["score"], strict=True)]


HARNESSES: dict[str, Callable[[Reranker, str, Sequence[Item], int], Ranked]] = {
    "langchain": run_langchain,
    "llamaindex": run_llamaindex,
    "pyterrier": run_pyterrier,
}


def import_without(monkeypatch, framework: str, adapter: str) -> None:
    """Import ``adapter`` as if ``framework`` were not installed (its modules hidden)."""
    import importlib
    import sys

    for name in [m for m in sys.modules if m == framework or m.startswith(framework + ".")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, framework, None)  # makes ``import framework`` fail
    monkeypatch.delitem(sys.modules, adapter, raising=False)  # restored afterwards
    importlib.import_module(adapter)
