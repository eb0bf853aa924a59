"""Strategies: how a program is written, each a registered name, options record and factory.

* ``base``: the :class:`~.base.Strategy` record, the registry and the collaborators a factory
  is given;
* ``structural``: genomes of primitives composed and mutated, no language model;
* ``draft``: a whole program per generation (the single draft, or best of N with a
  pre-check and repair turns);
* ``edit``: search/replace edits of one parent's source;
* ``guided``: the model chooses a parent genome's next edit under a JSON schema;
* ``external``: programs a peer wrote elsewhere, handed to the loop;
* ``catalog``: every strategy, and :func:`~.catalog.build_proposer` (spec -> proposer);
* ``flags``: the command line's options resolved into a proposer spec.
"""

from embedding_ttc.search.strategies.base import (
    STRATEGIES,
    Collaborators,
    Strategy,
    StrategyError,
)
from embedding_ttc.search.strategies.catalog import build_proposer, get_strategy

__all__ = [
    "STRATEGIES",
    "Collaborators",
    "Strategy",
    "StrategyError",
    "build_proposer",
    "get_strategy",
]
