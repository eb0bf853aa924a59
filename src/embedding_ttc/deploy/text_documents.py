"""Documents a caller gives by their text, as :meth:`Reranker.rerank_texts` reads them.

A document is a string, or a ``{"text", "id"?, "title"?}`` record; title and text are joined as
the index joins them. What a ranking of such documents returns is here too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from embedding_ttc.deploy.errors import CandidateRequestError
from embedding_ttc.tasks.task import join_title_text

TextInput = str | Mapping[str, str]
"""A document given by its text: a string, or ``{"text"}`` with optional ``"id"``, ``"title"``."""


@dataclass(frozen=True)
class TextDocument:
    """A document a caller gives by its text.

    Attributes:
        id: the caller's id (``None`` for a bare text).
        text: title and text joined, as the encoder sees it (as the index joins them).

    """

    id: str | None
    text: str


@dataclass(frozen=True)
class RankedText:
    """One ranked document of :meth:`Reranker.rerank_texts`.

    Attributes:
        position: its position in the request.
        id: the caller's id, if it gave one.
        score: the program's score.

    """

    position: int
    id: str | None
    score: float


@dataclass(frozen=True)
class TextRanking:
    """The best documents of a :meth:`Reranker.rerank_texts` call, best first.

    Attributes:
        results: the ranked documents (ties: earlier position first).
        live: how many of the given documents were computed live (not held by the index).

    """

    results: list[RankedText]
    live: int


def _text_document(item: object, position: int) -> TextDocument:
    """A document given as a string or a ``{"text", "id"?, "title"?}`` record."""
    if isinstance(item, str):
        doc = TextDocument(None, join_title_text("", item))
    elif isinstance(item, Mapping):
        unknown = sorted(str(key) for key in item if key not in ("id", "title", "text"))
        if unknown:
            raise CandidateRequestError(
                f"document {position} has unknown field(s) {unknown}; "
                "give 'text', and optionally 'id' and 'title'",
                position=position,
            )
        text, title, doc_id = item.get("text"), item.get("title", ""), item.get("id")
        for name, value in (("text", text), ("title", title)):
            if not isinstance(value, str):
                kind = "missing" if value is None else type(value).__name__
                raise CandidateRequestError(
                    f"document {position}: '{name}' must be a string, got {kind}",
                    position=position,
                )
        if not str(text).strip():
            # A title alone is not a document: the same rule as a corpus file's records.
            raise CandidateRequestError(
                f"document {position} has an empty text (its 'text' field)", position=position
            )
        if doc_id is not None and not isinstance(doc_id, str):
            raise CandidateRequestError(
                f"document {position}: 'id' must be a string, got {type(doc_id).__name__}",
                position=position,
            )
        doc = TextDocument(doc_id, join_title_text(str(title), str(text)))
    else:
        raise CandidateRequestError(
            f"document {position} must be a string or a record with 'text', "
            f"got {type(item).__name__}",
            position=position,
        )
    if not doc.text:
        raise CandidateRequestError(f"document {position} has an empty text", position=position)
    return doc


def text_documents(documents: Sequence[TextInput]) -> list[TextDocument]:
    """The documents of a request, checked: each a text or a record, ids given at most once."""
    if isinstance(documents, str | Mapping):
        raise TypeError("documents must be a sequence of documents, not a single one")
    docs: list[TextDocument] = []
    ids: set[str] = set()
    for i, item in enumerate(documents):
        doc = _text_document(item, i)
        if doc.id is not None:
            if doc.id in ids:
                raise CandidateRequestError(f"document id {doc.id!r} is given twice", position=i)
            ids.add(doc.id)
        docs.append(doc)
    if not docs:
        raise CandidateRequestError("the document list is empty")
    return docs
