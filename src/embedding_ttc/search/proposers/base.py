"""The proposer seam: a :class:`Proposer` writes one program per generation.

A proposer reads the :class:`~embedding_ttc.search.state.SearchState` (history, frontier with
sources, task names) and returns a :class:`~embedding_ttc.search.state.Proposal`. Its two
outcomes are kept apart (house style: status apart from metrics):

* a reply, with or without code: a ``Proposal`` (``source=None`` when the reply holds no
  program; the loop rejects it with a reason);
* no usable reply at all (API error, timeout, rate limit after the client's retries,
  malformed answer, empty reply): :class:`ProposerError`, carrying what the call cost so far;
  the loop records it as ``Status.PROPOSER_ERROR`` and goes on.

This module also holds what every LLM backend shares: the lower-level :class:`ChatBackend`
seam (one chat request, used by wrappers such as the drafting proposer), the price table,
turning a reply into a ``Proposal`` (:func:`proposal_from_reply`), and the one request with
the full prompt that is every backend's ``propose`` (:func:`propose_with_full_prompt`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.program_files.parse import parse_reply
from embedding_ttc.search.prompts.full import render_prompt
from embedding_ttc.search.state import Proposal, SearchState, Usage


@runtime_checkable
class Proposer(Protocol):
    """Writes one candidate program per call.

    Attributes:
        name: the backend's name as registered (``"openai"``, ``"structural"`` ...).

    """

    name: str

    def propose(self, state: SearchState) -> Proposal:
        """Write one program for ``state.generation``.

        Raises:
            ProposerError: when no usable reply could be obtained.

        """
        ...


@dataclass(frozen=True)
class ChatReply:
    """One chat reply: the assistant's text and what the request cost."""

    text: str
    usage: Usage


@runtime_checkable
class ChatBackend(Protocol):
    """One chat request to an LLM (the seam below ``propose``, for wrapping proposers).

    Attributes:
        name: the backend's name as registered (``"openai"``, ``"llama-cpp"`` ...).

    """

    name: str

    def chat(self, messages: list[dict[str, str]], *, seed: int) -> ChatReply:
        """Send ``messages`` (``role``/``content`` dicts) and return the reply.

        Args:
            messages: the conversation, ``user`` and ``assistant`` turns alternating.
            seed: the sampling seed (sent where the backend accepts one).

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
        self, messages: list[dict[str, str]], *, seed: int, schema: Mapping[str, Any] | None = None
    ) -> ChatReply:
        """:meth:`ChatBackend.chat`; with ``schema``, the reply is JSON under that schema."""
        ...


class ProposerError(EmbeddingTTCError):
    """A proposer call failed; nothing was proposed.

    Attributes:
        usage: what the failed call cost (tokens may be 0, seconds are measured), or ``None``.

    """

    def __init__(self, message: str, usage: Usage | None = None) -> None:
        super().__init__(message)
        self.usage = usage


class ProposerConfigError(EmbeddingTTCError):
    """A proposer cannot be built as configured (no model name, no API key, no model file)."""


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


def base_seed(backend: object, state: SearchState) -> int:
    """A wrapped backend's base seed (as its own ``propose`` uses it), else the run's."""
    seed = getattr(backend, "seed", None)
    return seed if isinstance(seed, int) else state.seed


def propose_with_full_prompt(
    backend: ChatBackend, state: SearchState, *, top_k: int | None, seed: int
) -> Proposal:
    """One request with the full prompt, parsed: ``propose`` of every LLM backend.

    Args:
        backend: the chat backend that answers.
        state: what the proposer may look at.
        top_k: frontier programs shown with their source; ``None`` shows every program of
            ``state.frontier`` (the loop already chose how many).
        seed: the backend's base seed; the request's is ``seed + state.generation``.

    Raises:
        ProposerError: when no usable reply could be obtained.

    """
    shown = len(state.frontier) if top_k is None else top_k
    prompt = render_prompt(state, top_k=shown)
    reply = backend.chat([{"role": "user", "content": prompt}], seed=seed + state.generation)
    return proposal_from_reply(reply.text, usage=reply.usage, proposer=backend.name, state=state)


def proposal_from_reply(reply: str, *, usage: Usage, proposer: str, state: SearchState) -> Proposal:
    """Parse a model's reply into a :class:`Proposal`.

    A reply without code is a proposal with ``source=None`` (the loop rejects it); an empty
    reply is an error.

    Args:
        reply: the model's whole reply.
        usage: what the call cost.
        proposer: the proposer's name.
        state: the state the reply answers (to resolve the ``Parent:`` id).

    Returns:
        The proposal.

    Raises:
        ProposerError: if the reply is empty.

    """
    if not reply.strip():
        raise ProposerError("the model returned an empty reply", usage)
    parsed = parse_reply(reply)
    return Proposal(
        source=parsed.source,
        novelty=parsed.novelty,
        hypothesis=parsed.hypothesis,
        usage=usage,
        proposer=proposer,
        parent_id=resolve_parent(parsed.parent_id, state),
        raw_reply=reply,
    )


def resolve_parent(parent_id: str | None, state: SearchState) -> str | None:
    """Map a claimed parent id onto a recorded program id where one matches.

    Models write ids loosely (``G0004``, ``g4``, ``P0``); an id that matches a recorded one
    exactly, case-insensitively, or by generation number becomes that id. Anything else is
    kept as written: the claim stays in the ledger for forensics.
    """
    if parent_id is None:
        return None
    known = [r.program_id for r in state.history]
    if parent_id in known:
        return parent_id
    lowered = {k.lower(): k for k in known}
    if parent_id.lower() in lowered:
        return lowered[parent_id.lower()]
    generation = _generation_of(parent_id.lower())
    if generation is not None:
        same = [r.program_id for r in state.history if r.generation == generation]
        if len(same) == 1:
            return same[0]
    return parent_id


def _generation_of(program_id: str) -> int | None:
    """The generation a loosely written id names (``g0004``, ``g4``, ``4``, ``p0``), if any."""
    if program_id == "p0":
        return 0
    match = re.fullmatch(r"g?(\d+)(?:-\w+)?", program_id)
    return int(match.group(1)) if match else None
