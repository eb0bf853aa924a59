"""A deployed program as a LangChain document compressor (the ``langchain`` extra).

    from embedding_ttc.integrations.langchain import EmbeddingTTCReranker

    compressor = EmbeddingTTCReranker.from_index("runs/scifact-sc", top_n=5)
    best = compressor.compress_documents(retriever.invoke(query), query)
    # or ContextualCompressionRetriever(base_compressor=compressor, base_retriever=retriever)
    # (langchain_classic.retrievers in LangChain 1.x, langchain.retrievers before)

:meth:`EmbeddingTTCReranker.compress_documents` returns the ``top_n`` best documents, best first,
each a copy of the one given with the program's score in ``metadata["relevance_score"]`` (the
given documents are not changed). A document's id is ``Document.id``, or ``metadata[id_key]``
when ``id_key`` is set; a document the index holds under that id with the same text uses its
stored work, and one without an id is matched by its text. ``acompress_documents`` is
LangChain's own: :meth:`compress_documents` run in an executor thread (the reranker serialises
its calls, so concurrent ones are safe).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

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
    from langchain_core.callbacks import Callbacks
    from langchain_core.documents import BaseDocumentCompressor, Document
    from pydantic import ConfigDict, Field
except ModuleNotFoundError as exc:
    raise missing_framework(
        exc, "langchain_core", "langchain-core", "langchain", "the LangChain adapter"
    ) from None


class EmbeddingTTCReranker(BaseDocumentCompressor):
    """Rerank a LangChain retriever's documents with a deployed program.

    Attributes:
        reranker: the deployed program (:class:`~embedding_ttc.deploy.Reranker`).
        top_n: how many documents to return (at most; fewer if fewer are given).
        id_key: the metadata key holding a document's index id (``None``: ``Document.id``).
        title_key: the metadata key holding its title (``None``: the page content is the
            whole text), joined with the page content as the index joined them.

    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    reranker: Reranker
    top_n: int = Field(default=3, ge=1, strict=True)
    id_key: str | None = None
    title_key: str | None = None

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

    def compress_documents(
        self,
        documents: Sequence[Document],
        query: str,
        callbacks: Callbacks | None = None,
    ) -> Sequence[Document]:
        """The ``top_n`` best ``documents`` for ``query``, with ``metadata["relevance_score"]``.

        Raises:
            CandidateRequestError: a document is not a ``Document``, has an empty text, shares its
                id with another, or has a metadata id or title that is not a string.

        """
        given = list(documents)
        ranked = rank(self.reranker, query, self._candidates(given), self.top_n)
        out = []
        for r in ranked:
            doc = given[r.position]
            metadata: dict[str, Any] = {**doc.metadata, "relevance_score": r.score}
            out.append(Document(page_content=doc.page_content, metadata=metadata, id=doc.id))
        return out

    def _candidates(self, documents: list[Document]) -> list[Candidate]:
        candidates = []
        for i, doc in enumerate(documents):
            if not isinstance(doc, Document):
                raise CandidateRequestError(
                    f"document {i} must be a langchain_core Document, got {type(doc).__name__}",
                    position=i,
                )
            if self.id_key is None:
                doc_id = doc.id
            else:
                doc_id = metadata_string(doc.metadata, self.id_key, i, "id")
            title = metadata_string(doc.metadata, self.title_key, i, "title") or ""
            candidates.append(Candidate(doc.page_content, doc_id, title))
        return candidates
