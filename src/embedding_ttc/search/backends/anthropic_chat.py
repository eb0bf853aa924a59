"""A chat backend over Anthropic's Messages API (the paper's proposer was Claude Opus 4.6).

One call per chat request through the ``anthropic`` client (extra ``llm``)::

    Anthropic(api_key=..., base_url=..., timeout=..., max_retries=...)
        .messages.create(model=..., max_tokens=..., messages=[{"role": "user", "content": prompt}])

The reply is the concatenated ``text`` of the response's text content blocks; tokens come from
``response.usage.input_tokens`` and ``response.usage.output_tokens``. Retries (429, 5xx,
overload, connection errors, timeouts) are the client's own; what still fails becomes a
:class:`~embedding_ttc.search.proposer.ProposerError`.

The key defaults to ``ANTHROPIC_API_KEY`` (the client also reads ``ANTHROPIC_AUTH_TOKEN`` and its
profile configuration) and the base URL to ``ANTHROPIC_BASE_URL``. With an explicit ``base_url``
that checks no key (a proxy, or the test server) the fixed key ``"not-needed"`` is sent, since
the client will not send a request without one.
"""

from __future__ import annotations

import os
import time

from embedding_ttc.errors import MissingExtraError
from embedding_ttc.search.backends.base import ChatReply, StopRule, price_usd
from embedding_ttc.search.proposer import ProposerError
from embedding_ttc.search.state import Usage

DEFAULT_MODEL = "claude-opus-4-6"
"""The paper's proposer, Claude Opus 4.6 (§3.2)."""

DEFAULT_MAX_TOKENS = 16_384
"""Completion budget (below the client's limit for a non-streaming request at our timeout)."""

PLACEHOLDER_API_KEY = "not-needed"


class AnthropicBackend:
    """Answers a conversation with a Claude model.

    Args:
        model: the model name.
        api_key: default ``ANTHROPIC_API_KEY`` (or the client's own credential discovery).
        base_url: default ``ANTHROPIC_BASE_URL``, else Anthropic's API.
        temperature: sampling temperature; ``None`` leaves the API's default. The installed
            client's ``messages.create`` has no ``temperature`` keyword, so a value is sent in
            the request body (``extra_body``).
        max_tokens: the completion budget (required by the API).
        timeout: seconds per HTTP attempt.
        max_retries: retries of a failed attempt by the client.
        seed: accepted so that every backend takes the run's seed; the Messages API has no
            sampling seed, so it is not sent.

    Raises:
        MissingExtraError: if the ``anthropic`` package is not installed.

    """

    name = "anthropic"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        api_key: str | None = None,
        base_url: str | None = None,
        temperature: float | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout: float = 600.0,
        max_retries: int = 3,
        seed: int = 0,
    ) -> None:
        try:
            import anthropic
        except ImportError as exc:
            raise MissingExtraError("anthropic", "llm", "the Anthropic proposer") from exc
        api_key = api_key or os.environ.get("ANTHROPIC_API_KEY") or None
        if api_key is None and base_url is not None:
            api_key = PLACEHOLDER_API_KEY
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed
        # TypeError: the client raises it when it finds no credential at request time.
        self._errors: tuple[type[BaseException], ...] = (
            anthropic.AnthropicError,
            ValueError,
            TypeError,
        )
        self._client = anthropic.Anthropic(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries
        )

    def chat(
        self, messages: list[dict[str, str]], *, seed: int, stop: StopRule | None = None
    ) -> ChatReply:
        """One Messages API request (the API takes no seed; ``seed`` is ignored).

        The reply comes whole, so ``stop`` has nothing to cut.
        """
        extra = {"temperature": self.temperature} if self.temperature is not None else None
        started = time.perf_counter()
        try:
            response = self._client.messages.create(
                model=self.model,
                max_tokens=self.max_tokens,
                messages=messages,  # type: ignore[arg-type]
                extra_body=extra,
            )
        except self._errors as exc:  # API, connection, timeout, malformed JSON, credentials
            usage = Usage(model=self.model, seconds=time.perf_counter() - started)
            raise ProposerError(f"{type(exc).__name__}: {exc}", usage) from exc
        seconds = time.perf_counter() - started
        blocks = getattr(response, "content", None) or []
        texts = [getattr(b, "text", "") for b in blocks if getattr(b, "type", "") == "text"]
        reply = "".join(str(t) for t in texts)
        answered = str(getattr(response, "model", None) or self.model)
        reported = getattr(response, "usage", None)
        tokens_in = int(getattr(reported, "input_tokens", 0) or 0)
        tokens_out = int(getattr(reported, "output_tokens", 0) or 0)
        usage = Usage(
            model=answered,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            seconds=seconds,
            cost_usd=price_usd(answered, tokens_in, tokens_out),
        )
        return ChatReply(reply, usage)
