"""The errors of a deployed index: missing, corrupted, or built with another encoder or program."""

from __future__ import annotations

from embedding_ttc.errors import EmbeddingTTCError


class DeployError(EmbeddingTTCError):
    """An index directory is missing, malformed, corrupted or was built differently."""


class IndexCorruptError(DeployError):
    """A file of the index does not match its manifest (the message names the file)."""


class EncoderMismatchError(DeployError):
    """The encoder given is not the one the index was built with (the message names both)."""


class ProgramVersionError(DeployError):
    """The installed program is another version than the one the index was built with."""


class TokenizerMismatchError(DeployError):
    """The active tokenizer is not the one the index's BM25 and text analyses were built with."""


class CandidateRequestError(EmbeddingTTCError, ValueError):
    """A rerank request's candidates are bad: an empty list, an unknown id, or an id given twice.

    The request is at fault, not the program (whose failures are
    :class:`~embedding_ttc.programs.outcome.CandidateError`): the service answers it with a
    422 located at the offending candidate. Texts given to ``rerank_texts`` and the adapters
    raise it too, for a malformed document or an empty text.

    Attributes:
        query: the query's position in the batch.
        position: the offending candidate's position in its list (``None`` for an empty list).

    """

    def __init__(self, message: str, *, query: int = 0, position: int | None = None) -> None:
        super().__init__(message)
        self.query = query
        self.position = position
