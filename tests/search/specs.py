"""Proposer specs for tests: a strategy, a backend and options completed by the strategy."""

from __future__ import annotations

from embedding_ttc.runs.config import ProposerSpec
from embedding_ttc.search.strategies import get_strategy


def spec(strategy: str, backend: str | None = None, **options: object) -> ProposerSpec:
    """The spec of ``strategy`` over ``backend`` with ``options`` (the rest: the defaults)."""
    chosen = get_strategy(strategy)
    record = chosen.read_options(options)
    return ProposerSpec(strategy=strategy, backend=backend, options=chosen.write_options(record))
