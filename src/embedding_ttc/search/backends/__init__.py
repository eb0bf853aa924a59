"""Chat backends: which language model answers (an API, a local server, a local GGUF model).

Every backend implements :class:`~embedding_ttc.search.backends.base.ChatBackend` (the
JSON-constraining ones also :class:`~embedding_ttc.search.backends.base.JsonChatBackend`)
and is built by name through :func:`~embedding_ttc.search.backends.catalog.make_backend`.
How a program is written from the replies is a strategy's
(:mod:`embedding_ttc.search.strategies`).
"""

from embedding_ttc.search.backends.base import ChatBackend, ChatReply, JsonChatBackend
from embedding_ttc.search.backends.catalog import BACKENDS, make_backend

__all__ = ["BACKENDS", "ChatBackend", "ChatReply", "JsonChatBackend", "make_backend"]
