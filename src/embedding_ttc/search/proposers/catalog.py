"""The proposer registry: name -> factory, with lazy imports of the LLM backends.

``structural`` needs nothing beyond the package; ``openai`` and ``anthropic`` need the extra
``llm``; ``llama-cpp`` needs ``local-llm``. A backend's module (and its client package) is
imported only when that proposer is built, so a missing extra fails with an install hint
only for the proposer that needs it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from embedding_ttc.registry import Registry
from embedding_ttc.search.proposers.base import Proposer

ProposerFactory = Callable[..., Proposer]

PROPOSERS: Registry[ProposerFactory] = Registry("proposer")


def _lazy(target: str) -> ProposerFactory:
    module, _, cls = target.partition(":")

    def factory(**options: object) -> Proposer:
        mod = importlib.import_module(f"embedding_ttc.search.proposers.{module}")
        built: Proposer = getattr(mod, cls)(**options)
        return built

    factory.__doc__ = f"Build ``{cls}`` from ``embedding_ttc.search.proposers.{module}``."
    return factory


PROPOSERS.register("structural", _lazy("structural.proposer:StructuralProposer"))
PROPOSERS.register("openai", _lazy("openai_chat:OpenAIProposer"))
PROPOSERS.register("anthropic", _lazy("anthropic_chat:AnthropicProposer"))
PROPOSERS.register("llama-cpp", _lazy("llama_cpp:LlamaCppProposer"))


def make_proposer(name: str, **options: object) -> Proposer:
    """Build the proposer registered as ``name`` with keyword ``options``.

    Args:
        name: a registered name (``structural``, ``openai``, ``anthropic``, ``llama-cpp``).
        **options: the backend's constructor arguments (``model=``, ``base_url=``,
            ``seed=`` ...).

    Returns:
        The proposer.

    Raises:
        UnknownNameError: for an unregistered name (the message suggests close ones).
        MissingExtraError: when the backend's optional package is not installed.

    """
    return PROPOSERS.get(name)(**options)
