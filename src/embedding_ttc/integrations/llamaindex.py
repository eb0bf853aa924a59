"""A deployed program as a LlamaIndex node postprocessor (the ``llamaindex`` extra).

    from embedding_ttc.integrations.llamaindex import EmbeddingTTCReranker

    rerank = EmbeddingTTCReranker.from_index("runs/scifact-sc", top_n=5)
    query_engine = index.as_query_engine(similarity_top_k=50, node_postprocessors=[rerank])

:meth:`EmbeddingTTCReranker.postprocess_nodes` returns the ``top_n`` best nodes, best first, each
a new ``NodeWithScore`` over the same node with the program's score (the given ones are not
changed). A node's text is ``node.get_content()`` (its text, without metadata); its id is
``node.node_id``, or ``metadata[id_key]`` when ``id_key`` is set. A node the index holds under
that id with the same text uses its stored work; any other is computed live (LlamaIndex gives
nodes random ids unless they are set: build them with ``id_=`` the corpus id, or set
``id_key``, for the index's work to be used). The async form is LlamaIndex's own (the sync one
in a thread; the reranker serialises its calls).
"""

from __future__ import annotations

from pathlib import Path

from embedding_ttc.deploy.errors import CandidateRequestError
from embedding_ttc.deploy.reranker import Reranker
from embedding_ttc.encoders.base import Encoder
from embedding_ttc.integrations.candidates import (
    Candidate,
    metadata_string,
    missing_framework,
    rank,
)

try:
    from llama_index.core.bridge.pydantic import Field
    from llama_index.core.callbacks import CBEventType, EventPayload
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle
except ModuleNotFoundError as exc:
    raise missing_framework(
        exc, "llama_index", "llama-index-core", "llamaindex", "the LlamaIndex adapter"
    ) from None


class EmbeddingTTCReranker(BaseNodePostprocessor):
    """Rerank a LlamaIndex retriever's nodes with a deployed program.

    Attributes:
        reranker: the deployed program (:class:`~embedding_ttc.deploy.Reranker`; not
            serialised).
        top_n: how many nodes to return (at most; fewer if fewer are given).
        id_key: the metadata key holding a node's index id (``None``: ``node.node_id``).
        title_key: the metadata key holding its title (``None``: the content is the whole
            text), joined with the content as the index joined them.

    """

    reranker: Reranker = Field(exclude=True)
    top_n: int = Field(default=3, ge=1, strict=True)
    id_key: str | None = None
    title_key: str | None = None

    @classmethod
    def class_name(cls) -> str:
        """The name LlamaIndex serialises this postprocessor under: the class's."""
        return "EmbeddingTTCReranker"

    @classmethod
    def from_index(
        cls,
        directory: Path | str,
        *,
        top_n: int = 3,
        id_key: str | None = None,
        title_key: str | None = None,
        encoder: Encoder | None = None,
        cache_dir: Path | str | None = None,
        verify: bool = False,
    ) -> EmbeddingTTCReranker:
        """Open the index at ``directory`` (:meth:`Reranker.load`) and wrap it."""
        reranker = Reranker.load(directory, encoder=encoder, verify=verify, cache_dir=cache_dir)
        return cls(reranker=reranker, top_n=top_n, id_key=id_key, title_key=title_key)

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        """The ``top_n`` best ``nodes`` for the query, each with the program's score.

        Raises:
            ValueError: no query was given.
            CandidateRequestError: a node is not a ``NodeWithScore``, has an empty text, shares its
                id with another, or has a metadata id or title that is not a string.

        """
        if query_bundle is None:
            raise ValueError(
                "EmbeddingTTCReranker needs the query: postprocess_nodes(nodes, query_str=...)"
            )
        given = list(nodes)
        candidates = [self._candidate(n, i) for i, n in enumerate(given)]
        with self.callback_manager.event(
            CBEventType.RERANKING,
            payload={
                EventPayload.NODES: given,
                EventPayload.MODEL_NAME: self.reranker.index.manifest.program.name,
                EventPayload.QUERY_STR: query_bundle.query_str,
                EventPayload.TOP_K: self.top_n,
            },
        ) as event:
            ranked = rank(self.reranker, query_bundle.query_str, candidates, self.top_n)
            out = [NodeWithScore(node=given[r.position].node, score=r.score) for r in ranked]
            event.on_end(payload={EventPayload.NODES: out})
        return out

    def _candidate(self, node: NodeWithScore, position: int) -> Candidate:
        if not isinstance(node, NodeWithScore):
            raise CandidateRequestError(
                f"node {position} must be a llama_index NodeWithScore, got {type(node).__name__}",
                position=position,
            )
        metadata = node.node.metadata
        if self.id_key is None:
            node_id: str | None = node.node.node_id
        else:
            node_id = metadata_string(metadata, self.id_key, position, "id")
        title = metadata_string(metadata, self.title_key, position, "title") or ""
        text = node.node.get_content(metadata_mode=MetadataMode.NONE)
        return Candidate(text, node_id, title)
