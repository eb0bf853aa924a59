"""Every strategy, registered, and the one place a proposer spec becomes a proposer.

Each strategy is a folder (its options record, factory, prompt and command-line options) and
its entry here (its import and its place in :data:`REGISTERED`). The folders are imported by
name, not found by scanning.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from embedding_ttc.search.strategies.base import STRATEGIES, Collaborators, Strategy, register
from embedding_ttc.search.strategies.draft import STRATEGY as DRAFT
from embedding_ttc.search.strategies.edit import STRATEGY as EDIT
from embedding_ttc.search.strategies.external import STRATEGY as EXTERNAL
from embedding_ttc.search.strategies.guided import STRATEGY as GUIDED
from embedding_ttc.search.strategies.structural import STRATEGY as STRUCTURAL

if TYPE_CHECKING:
    from embedding_ttc.runs.config import ProposerSpec
    from embedding_ttc.search.backends.base import ChatBackend
    from embedding_ttc.search.proposer import Proposer

REGISTERED: tuple[Strategy[Any], ...] = tuple(
    register(strategy) for strategy in (STRUCTURAL, DRAFT, EDIT, GUIDED, EXTERNAL)
)
"""The strategies in the order the documentation lists them."""


def get_strategy(name: str) -> Strategy[Any]:
    """The strategy registered as ``name``.

    Raises:
        UnknownNameError: for an unregistered name (the message suggests close ones).

    """
    return STRATEGIES.get(name)


def build_proposer(
    spec: ProposerSpec, backend: ChatBackend | None, given: Collaborators
) -> Proposer:
    """The proposer ``spec`` names, over ``backend`` (built by the caller from ``spec.backend``).

    Raises:
        UnknownNameError: an unregistered strategy.
        StrategyError: options that are not the strategy's, or a backend it cannot use.

    """
    strategy = get_strategy(spec.strategy)
    options = strategy.read_options(spec.options)
    strategy.check_backend(backend)
    return strategy.build(backend, options, given)
