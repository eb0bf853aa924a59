"""The backend registry: name -> factory, with lazy imports of the LLM clients.

``openai`` and ``anthropic`` need the extra ``llm``; ``llama-cpp`` needs ``local-llm``. A
backend's module (and its client package) is imported only when that backend is built, so a
missing extra fails with an install hint only for the backend that needs it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from embedding_ttc.registry import Registry
from embedding_ttc.search.backends.base import ChatBackend

BackendFactory = Callable[..., ChatBackend]

BACKENDS: Registry[BackendFactory] = Registry("backend")


def _lazy(target: str) -> BackendFactory:
    module, _, cls = target.partition(":")

    def factory(**options: object) -> ChatBackend:
        mod = importlib.import_module(f"embedding_ttc.search.backends.{module}")
        built: ChatBackend = getattr(mod, cls)(**options)
        return built

    factory.__doc__ = f"Build ``{cls}`` from ``embedding_ttc.search.backends.{module}``."
    return factory


BACKENDS.register("openai", _lazy("openai_chat:OpenAIBackend"))
BACKENDS.register("anthropic", _lazy("anthropic_chat:AnthropicBackend"))
BACKENDS.register("llama-cpp", _lazy("llama_cpp:LlamaCppBackend"))


def make_backend(name: str, **options: object) -> ChatBackend:
    """Build the chat backend registered as ``name`` with keyword ``options``.

    Args:
        name: a registered name (``openai``, ``anthropic``, ``llama-cpp``).
        **options: the backend's constructor arguments (``model=``, ``base_url=``,
            ``seed=`` ...).

    Returns:
        The backend.

    Raises:
        UnknownNameError: for an unregistered name (the message suggests close ones).
        MissingExtraError: when the backend's optional package is not installed.

    """
    return BACKENDS.get(name)(**options)
