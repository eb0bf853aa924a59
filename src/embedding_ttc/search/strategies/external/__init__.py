"""The external strategy: programs written outside the loop by a peer, handed over to it.

The proposer is :class:`~embedding_ttc.search.external.HandedOver`, recording the peer's name
(``openevolve``) as the candidates' proposer; it takes no backend (the peer has its own)
and is not chosen on the command line: a peer opens the search itself
(:func:`embedding_ttc.search.open.open_search` with ``make_proposer``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from embedding_ttc.search.strategies.base import STRICT, Collaborators, Strategy

if TYPE_CHECKING:
    from embedding_ttc.search.backends.base import ChatBackend
    from embedding_ttc.search.proposer import Proposer


@dataclass(frozen=True)
class ExternalOptions:
    """Who writes the programs.

    Attributes:
        peer: the peer's name, recorded as the candidates' proposer (``openevolve``).

    """

    __pydantic_config__ = STRICT

    peer: str = "external"


def build(backend: ChatBackend | None, options: ExternalOptions, given: Collaborators) -> Proposer:
    """A proposer with nothing handed over yet (the peer hands each source to the loop)."""
    from embedding_ttc.search.external import HandedOver

    return HandedOver(options.peer)


STRATEGY = Strategy("external", ExternalOptions, "none", build)
