"""Programs over a frozen encoder: the protocol, its context, the library and its registry.

* :mod:`~embedding_ttc.programs.base`: ``P(Q, D, S, ctx) -> S'`` (:class:`Program`), its
  :class:`Context` and what a deployed index adds to it;
* :mod:`~embedding_ttc.programs.p0`: P0, the cosine baseline;
* ``library/``: the named programs (the paper's frontier, SoftCentroid, the classical and
  fusion baselines), one module each;
* ``primitives/``: what programs are built from, and what program files may import (scores,
  chunking, feedback, late interaction, lexical channels, text analyses);
* ``text/``: the text machinery under the lexical primitives (tokens, term incidence, BM25,
  text analyses), re-exported by them;
* :mod:`~embedding_ttc.programs.catalog`: the registry, parametrised names and groups;
  :mod:`~embedding_ttc.programs.listing`: what ``embedding-ttc programs`` shows;
* :mod:`~embedding_ttc.programs.recipe`: how a program deploys, declared by the program;
* :mod:`~embedding_ttc.programs.trec_order`: trec_eval's ranking order, which programs and
  the evaluation share.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from embedding_ttc.programs.base import Context, EncodeFn, Matrix, Program

if TYPE_CHECKING:
    from embedding_ttc.programs.catalog import PROGRAMS, get_program

__all__ = ["PROGRAMS", "Context", "EncodeFn", "Matrix", "Program", "get_program"]


def __getattr__(name: str) -> Any:
    """The registry's names, imported on first use (PEP 562).

    Importing a module of this package (``programs.base``, a primitive) does not load the
    whole library: the sandbox's child imports :class:`Context` before it contains itself,
    and loads no more than the program it runs needs.
    """
    if name in ("PROGRAMS", "get_program"):
        from embedding_ttc.programs import catalog

        return getattr(catalog, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
