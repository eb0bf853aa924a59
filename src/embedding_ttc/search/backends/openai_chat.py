"""A chat backend over any OpenAI-compatible chat-completions endpoint.

The ``openai`` client (extra ``llm``) talks to OpenAI itself and to local servers that speak
the same API: vLLM (``vllm serve``), Ollama (``http://localhost:11434/v1``) and llama.cpp's
``llama-server`` (``http://localhost:8080/v1``). One call per chat request::

    OpenAI(base_url=..., api_key=..., timeout=..., max_retries=...)
        .chat.completions.create(model=..., messages=[{"role": "user", "content": prompt}], ...)

The reply is ``response.choices[0].message.content``; tokens come from ``response.usage``
(``prompt_tokens``, ``completion_tokens``), or are estimated when a server omits it. Retries
(HTTP 408/409/429/5xx, connection errors, timeouts) are the client's own, with its
exponential backoff and ``Retry-After`` handling; what still fails becomes a
:class:`~embedding_ttc.search.proposer.ProposerError`.

Options fall back to environment variables: the base URL to ``EMBEDDING_TTC_OPENAI_BASE_URL``
then ``OPENAI_BASE_URL`` (else OpenAI's API); the key to ``OPENAI_API_KEY`` (a local server
needs none, so the fixed key ``"not-needed"`` is sent when a base URL is set: the client
refuses to start without one); the model to
``EMBEDDING_TTC_OPENAI_MODEL``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

from embedding_ttc.errors import MissingExtraError
from embedding_ttc.search.backends.base import ChatReply, StopRule, estimate_tokens, price_usd
from embedding_ttc.search.proposer import ProposerConfigError, ProposerError
from embedding_ttc.search.state import Usage

LOCAL_API_KEY = "not-needed"
"""The key sent to a local server that checks none (the client refuses to run without one)."""

DEFAULT_MAX_TOKENS = 16_384
"""Completion budget: a program file with its header and some reasoning fits comfortably."""


class OpenAIBackend:
    """Answers a conversation with a chat model behind an OpenAI-compatible API.

    Args:
        model: the model name (``gpt-4.1``, ``Qwen/Qwen2.5-Coder-32B-Instruct``, ``llama3.1``);
            default ``EMBEDDING_TTC_OPENAI_MODEL``.
        base_url: the API root including ``/v1``; default ``EMBEDDING_TTC_OPENAI_BASE_URL``,
            then ``OPENAI_BASE_URL``, then OpenAI's API.
        api_key: default ``OPENAI_API_KEY``; ``"not-needed"`` for a local server.
        temperature: sampling temperature; ``None`` leaves the server's default (OpenAI's
            reasoning models accept no other).
        max_tokens: the completion budget. Sent as ``max_completion_tokens`` to OpenAI's own
            API (where ``max_tokens`` is deprecated and refused by reasoning models) and as
            ``max_tokens`` to other servers (what vLLM, Ollama and llama.cpp read).
        timeout: seconds per HTTP attempt.
        max_retries: retries of a failed attempt by the client.
        seed: base sampling seed; a local server receives ``seed + generation`` (vLLM, Ollama
            and llama.cpp honour it), OpenAI's API none (its ``seed`` is deprecated there).

    Raises:
        MissingExtraError: if the ``openai`` package is not installed.
        ProposerConfigError: if no model is named, or OpenAI's API is used without a key.

    """

    name = "openai"

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout: float = 600.0,
        max_retries: int = 3,
        seed: int = 0,
    ) -> None:
        try:
            import openai
        except ImportError as exc:
            raise MissingExtraError("openai", "llm", "the OpenAI-compatible proposer") from exc
        model = model or os.environ.get("EMBEDDING_TTC_OPENAI_MODEL")
        if not model:
            raise ProposerConfigError(
                "the openai proposer needs a model name: pass model=... or set "
                "EMBEDDING_TTC_OPENAI_MODEL"
            )
        base_url = (
            base_url
            or os.environ.get("EMBEDDING_TTC_OPENAI_BASE_URL")
            or os.environ.get("OPENAI_BASE_URL")
            or None
        )
        api_key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if api_key is None:
            if base_url is None:
                raise ProposerConfigError(
                    "the openai proposer needs OPENAI_API_KEY for OpenAI's API, or a base_url "
                    "(EMBEDDING_TTC_OPENAI_BASE_URL) for a local OpenAI-compatible server"
                )
            api_key = LOCAL_API_KEY
        self.model = model
        self.base_url = base_url
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.seed = seed
        self._errors: tuple[type[BaseException], ...] = (openai.OpenAIError, ValueError)
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries
        )

    @property
    def _official_api(self) -> bool:
        return self.base_url is None or "api.openai.com" in self.base_url

    constrains_json = True

    def chat(
        self,
        messages: list[dict[str, str]],
        *,
        seed: int,
        stop: StopRule | None = None,
        schema: Mapping[str, Any] | None = None,
    ) -> ChatReply:
        """One chat-completions request (the seed goes to local servers only).

        The reply comes whole, so ``stop`` has nothing to cut.

        With ``schema``, the reply is asked for as JSON under it (``response_format``
        ``json_schema``, which OpenAI's API and llama.cpp's server enforce).
        """
        # Only the options that are set are sent: every server accepts their absence.
        options: dict[str, Any] = {}
        if schema is not None:
            options["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": dict(schema), "strict": False},
            }
        if self.temperature is not None:
            options["temperature"] = self.temperature
        if self._official_api:
            options["max_completion_tokens"] = self.max_tokens
        else:
            options["max_tokens"] = self.max_tokens
            options["seed"] = seed
        started = time.perf_counter()
        try:
            response = self._client.chat.completions.create(
                model=self.model,
                messages=messages,  # type: ignore[arg-type]
                **options,
            )
        except self._errors as exc:  # API, connection, timeout, malformed JSON (ValueError)
            usage = Usage(model=self.model, seconds=time.perf_counter() - started)
            raise ProposerError(f"{type(exc).__name__}: {exc}", usage) from exc
        seconds = time.perf_counter() - started
        choices = getattr(response, "choices", None) or []
        message = getattr(choices[0], "message", None) if choices else None
        reply = getattr(message, "content", None) or ""
        answered = getattr(response, "model", None) or self.model
        reported = getattr(response, "usage", None)
        tokens_in = getattr(reported, "prompt_tokens", None)
        tokens_out = getattr(reported, "completion_tokens", None)
        prompt = "\n".join(m["content"] for m in messages)
        tokens_in = int(tokens_in) if tokens_in is not None else estimate_tokens(prompt)
        tokens_out = int(tokens_out) if tokens_out is not None else estimate_tokens(reply)
        usage = Usage(
            model=answered,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            seconds=seconds,
            cost_usd=price_usd(answered, tokens_in, tokens_out),
        )
        if not choices:
            raise ProposerError("the server returned no choices", usage)
        return ChatReply(reply, usage)
