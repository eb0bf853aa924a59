"""Strategies: how a program is written, each a folder and one registry line.

* ``base``: the :class:`~.base.Strategy` record, the registry, the collaborators a factory is
  given, the ranged fields of an options record and a command-line :class:`~.base.Flag`;
* ``structural``: genomes of primitives composed and mutated, no language model;
* ``draft``: a whole program per generation (the single draft, or best of N with a
  pre-check and repair turns);
* ``edit``: search/replace edits of one parent's source;
* ``guided``: the model chooses a parent genome's next edit under a JSON schema;
* ``external``: programs a peer wrote elsewhere, handed to the loop;
* ``catalog``: every strategy registered, and :func:`~.catalog.build_proposer` (spec ->
  proposer).

Each folder holds its options record (ranges checked once, on construction), its factory, its
prompt and its command-line options with how a new run's options follow from them; the
command line adds every registered strategy's options to its parser.
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
