"""Library programs written as search programs, for an edit to start from.

At the start of a run the frontier holds P0 alone, whose body is ``return S.copy()``: there is
nothing to edit, and a small model asked to change one idea of it writes a program from scratch
or copies the reply format. Evolutionary program searches start from a user's initial program
instead; here the run's reference program is that program. :data:`SEEDS` holds the library
programs a run may name as its reference, each rewritten as a search program file (the
``def program(Q, D, S, ctx)`` form the sandbox runs) that scores exactly as the library class
does (a contract test compares them task by task).

The edit proposer starts from a seed while the frontier shows no program but the root
(:func:`~embedding_ttc.search.population.choose_parent`); the seed's children are ledger
records like any other, with the seed's name as their parent. A run with a reference
registers its seed's structure with the library's (:func:`seed_structures`), so a copy of the
seed (a comment changed) is a near-duplicate, not a new program.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

BM25_DENSE_RRF = '''\
"""Reciprocal rank fusion of BM25 and the cosine scores (the library's BM25DenseRRF).

Novelty: the plain sparse-dense hybrid, RRF with k = 60 over each query's candidates.
Hypothesis: BM25 finds the exact-term matches the dense cosine misses.
"""
from embedding_ttc.programs.primitives.channels import bm25_scores, mask_for
from embedding_ttc.programs.primitives.scores import rrf


def program(Q, D, S, ctx):
    mask = mask_for(ctx, S)  # None, or (n_q, n_d) bool: each query's candidates
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts
    return rrf([lexical, S], mask=mask)  # float32 (n_q, n_d)
'''

SEEDS: Mapping[str, str] = MappingProxyType({"BM25DenseRRF": BM25_DENSE_RRF})
"""Library program name -> its source as a search program."""


def seeds_for(reference: str | None) -> tuple[tuple[str, str], ...]:
    """The ``(name, source)`` seeds of a run whose reference program is ``reference``.

    A reference without a search-program form (or no reference) gives no seed: the edit then
    starts from the frontier as it is.
    """
    if reference is None or reference not in SEEDS:
        return ()
    return ((reference, SEEDS[reference]),)


def seed_structures(reference: str | None) -> dict[str, tuple[str, ...]]:
    """The structures of the seeds of ``reference``, named ``seed:<name>``, for the registry."""
    from embedding_ttc.search.novelty import structure

    return {f"seed:{name}": structure(source) for name, source in seeds_for(reference)}
