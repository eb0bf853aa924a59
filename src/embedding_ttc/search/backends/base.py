"""The chat-backend seam: one request to a language model, returning its text and cost.

A backend (:mod:`.openai_chat`, :mod:`.anthropic_chat`, :mod:`.llama_cpp`) only answers a
conversation: :class:`ChatBackend` ``.chat(messages, *, seed) -> ChatReply``, and, for the
backends that can constrain a reply to a JSON schema, :class:`JsonChatBackend`. What to ask and
what to make of the reply is a strategy's (:mod:`embedding_ttc.search.strategies`). A backend
that gets no usable reply raises :class:`~embedding_ttc.search.proposer.ProposerError`.

This module also holds what every backend shares: the price table and the token estimate of
servers that report none.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from embedding_ttc.search.state import Usage


@dataclass(frozen=True)
class ChatReply:
    """One chat reply: the assistant's text and what the request cost."""

    text: str
    usage: Usage


StopRule = Callable[[str], bool]
"""When a reply may end early: ``stop(text_so_far)`` true. The caller (the strategy) knows
what it asked for; a backend that streams may cut the reply there, one that does not ignores
it (its reply is whole)."""


@runtime_checkable
class ChatBackend(Protocol):
    """One chat request to an LLM (what every backend implements).

    Attributes:
        name: the backend's name as registered (``"openai"``, ``"llama-cpp"`` ...).

    """

    name: str

    def chat(
        self, messages: list[dict[str, str]], *, seed: int, stop: StopRule | None = None
    ) -> ChatReply:
        """Send ``messages`` (``role``/``content`` dicts) and return the reply.

        Args:
            messages: the conversation, ``user`` and ``assistant`` turns alternating.
            seed: the sampling seed (sent where the backend accepts one).
            stop: where the reply may end early (:data:`StopRule`; ``None``: at its end).

        Raises:
            ProposerError: when no usable reply could be obtained.

        """
        ...


@runtime_checkable
class JsonChatBackend(Protocol):
    """A chat backend that can constrain a reply to a JSON schema.

    Attributes:
        name: the backend's name as registered.
        constrains_json: always true (marks the backends that take ``schema``).

    """

    name: str
    constrains_json: bool

    def chat(
        self,
        messages: list[dict[str, str]],
        *,
        seed: int,
        stop: StopRule | None = None,
        schema: Mapping[str, Any] | None = None,
    ) -> ChatReply:
        """:meth:`ChatBackend.chat`; with ``schema``, the reply is JSON under that schema."""
        ...


PRICES_USD_PER_MTOK: Mapping[str, tuple[float, float]] = {
    # OpenAI list prices (platform.openai.com/docs/pricing), standard tier, early 2026.
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "o3": (2.00, 8.00),
    "o4-mini": (1.10, 4.40),
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
    # Anthropic list prices (anthropic.com/pricing), early 2026.
    "claude-opus-4-6": (5.00, 25.00),
    "claude-opus-4-5": (5.00, 25.00),
    "claude-opus-4-1": (15.00, 75.00),
    "claude-opus-4": (15.00, 75.00),
    "claude-sonnet-4-6": (3.00, 15.00),
    "claude-sonnet-4-5": (3.00, 15.00),
    "claude-sonnet-4": (3.00, 15.00),
    "claude-haiku-4-5": (1.00, 5.00),
}
"""USD per million (input, output) tokens, by model name.

The vendors' public list prices for their standard (not batch, not cached) tier as published
on their pricing pages in early 2026; prices change, so a run's cost is an estimate. A model
that is not listed (a local model served by vLLM, Ollama or llama.cpp, or a model released
later) costs 0.0: the ledger then under-reports rather than invents a price.
"""

# A dated snapshot ("gpt-4o-2024-08-06", "claude-sonnet-4-5-20250929") costs what its alias does.
_DATE_SUFFIX = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")


def price_usd(model: str, tokens_in: int, tokens_out: int) -> float:
    """The list-price cost of one call (see :data:`PRICES_USD_PER_MTOK`); 0.0 when unknown.

    Args:
        model: the model name, with or without a date suffix or a ``vendor/`` prefix.
        tokens_in: prompt tokens.
        tokens_out: completion tokens.

    Returns:
        The cost in USD.

    """
    name = model.strip().lower().rsplit("/", 1)[-1]
    price = PRICES_USD_PER_MTOK.get(name) or PRICES_USD_PER_MTOK.get(_DATE_SUFFIX.sub("", name))
    if price is None:
        return 0.0
    return (tokens_in * price[0] + tokens_out * price[1]) / 1_000_000


def estimate_tokens(text: str) -> int:
    """A rough token count (about four characters per token) for servers that report none.

    The rule of thumb of OpenAI's tokenizer documentation for English text; used only when an
    OpenAI-compatible server omits its ``usage`` field, so that token budgets still move.
    """
    return (len(text) + 3) // 4
