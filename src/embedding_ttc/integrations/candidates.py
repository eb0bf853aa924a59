"""A framework's shortlist as the reranker reads it, and its ranking; shared by the adapters.

An adapter turns each of a framework's documents into a :class:`Candidate` (its text, and the
id and title the framework carries, if any) and ranks them with :func:`rank`. A candidate's id
is what lets the reranker use the index's stored work: a document the index holds under that id
with the same text (title and text joined as the index joins them) is not recomputed; a
document without an id is matched by its text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from embedding_ttc.deploy.errors import CandidateRequestError
from embedding_ttc.deploy.reranker import Reranker
from embedding_ttc.deploy.text_documents import RankedText
from embedding_ttc.errors import MissingExtraError


@dataclass(frozen=True)
class Candidate:
    """One document of a framework's shortlist.

    Attributes:
        text: its text (the body; the title apart).
        id: the id the index may hold it under (``None``: matched by its text).
        title: its title (``""`` for none).

    """

    text: str
    id: str | None = None
    title: str = ""

    def record(self) -> dict[str, str]:
        """The ``{"text", "id"?, "title"?}`` record :meth:`Reranker.rerank_texts` reads."""
        out = {"text": self.text}
        if self.id is not None:
            out["id"] = self.id
        if self.title:
            out["title"] = self.title
        return out


def metadata_string(
    metadata: Mapping[str, object], key: str | None, position: int, role: str
) -> str | None:
    """``metadata[key]`` as a document's ``role`` (its id or title): a string, or ``None``.

    Raises:
        CandidateRequestError: the value is there but is not a string (it is not converted: an
            integer id ``7`` and a stored id ``"07"`` must not silently differ).

    """
    if key is None:
        return None
    value = metadata.get(key)
    if value is None or isinstance(value, str):
        return value
    raise CandidateRequestError(
        f"document {position}: metadata[{key!r}] (its {role}) must be a string, "
        f"got {type(value).__name__}",
        position=position,
    )


def rank(
    reranker: Reranker, query: str, candidates: Sequence[Candidate], top_n: int
) -> list[RankedText]:
    """The best ``top_n`` candidates for ``query``, best first (ties: earlier position first).

    An empty shortlist ranks to an empty list (frameworks pass one when the first stage found
    nothing); anything else is :meth:`Reranker.rerank_texts`.

    Raises:
        TypeError: ``query`` is not a string.
        CandidateRequestError: a malformed candidate (an empty text, an id given twice).

    """
    if not isinstance(query, str):
        raise TypeError(f"the query must be a string, got {type(query).__name__}")
    if not candidates:
        return []
    ranking = reranker.rerank_texts(query, [c.record() for c in candidates], k=top_n)
    return ranking.results


def missing_framework(
    error: ModuleNotFoundError, module: str, package: str, extra: str, purpose: str
) -> MissingExtraError:
    """The install hint for a framework that is not installed; re-raises any other import error.

    Only a missing ``module`` (the framework itself) is the extra's absence: a module missing
    inside an installed framework is a broken install, reported as it is.
    """
    if error.name is None or error.name.split(".")[0] != module:
        raise error
    return MissingExtraError(package, extra, purpose)
