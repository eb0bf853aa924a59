"""What a structural proposal must avoid: the genomes and structures the history already holds.

:func:`known_programs` collects, from a proposer's state, every genome tried (the history's
``[genome ...]`` tags and the frontier sources' headers), the structural fingerprints the loop
recorded, and the structures a new program must stay distinct from (evaluated structural
programs, frontier sources and, optionally, the library). :func:`is_new` is the novelty test
of constraint 5 applied before the loop does; :func:`first_new` stacks random structural
mutations on a start genome until one is new. The structural proposer draws its change
this way; the guided one (:mod:`embedding_ttc.search.strategies.guided`) starts from the genome its
model chose.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import cache

from embedding_ttc.programs.outcome import Status
from embedding_ttc.search.novelty import (
    NOVELTY_THRESHOLD,
    fingerprint,
    library_structures,
    structure,
)
from embedding_ttc.search.state import SearchState
from embedding_ttc.search.structural.edits import Edit, apply_edit, possible_edits
from embedding_ttc.search.structural.genome import Genome, genome_from_source
from embedding_ttc.search.structural.mutate import mutate
from embedding_ttc.search.structural.render import render_program

MAX_STEPS = 6
"""Mutations stacked on one candidate before starting over."""

MAX_ATTEMPTS = 40
"""Candidates tried before giving up on novelty (the loop then rejects)."""

GENOME_TAG = re.compile(r"\[genome ([^\]]+)\]")
"""The genome key a structural program's novelty claim carries."""


@cache
def code_structure(genome: Genome) -> tuple[str, ...]:
    """The normalised structure of ``genome``'s program (cached: genomes recur)."""
    return structure(render_program(genome))


@dataclass(frozen=True)
class Known:
    """What the history says has been tried, and the structures a new program must avoid."""

    genomes: frozenset[Genome]
    fingerprints: frozenset[str]
    structures: tuple[tuple[str, ...], ...]


@cache
def _library_structures() -> tuple[tuple[str, ...], ...]:
    """The library programs' structures (read from their sources once per process)."""
    return tuple(library_structures().values())


def known_programs(state: SearchState, *, library: bool = False) -> Known:
    """The genomes, fingerprints and structures of ``state``.

    With ``library``, also the library programs' structures: a new program must stay
    distinct from those too.
    """
    genomes: set[Genome] = set()
    structures: list[tuple[str, ...]] = []
    for record in state.history:
        for tag in GENOME_TAG.findall(record.novelty):
            try:
                genome = Genome.from_key(tag)
            except ValueError:
                continue
            genomes.add(genome)
            if record.status == Status.OK:
                structures.append(code_structure(genome))
    for program in state.frontier:
        recovered = genome_from_source(program.source)
        if recovered is not None:
            genomes.add(recovered)
        try:
            structures.append(structure(program.source))
        except SyntaxError:
            continue
    if library:
        structures.extend(_library_structures())
    prints = frozenset(r.fingerprint for r in state.history if r.fingerprint)
    return Known(frozenset(genomes), prints, tuple(structures))


def is_new(genome: Genome, known: Known) -> bool:
    """Whether ``genome`` is untried and structurally distinct from everything ``known``."""
    if genome in known.genomes:
        return False
    shape = code_structure(genome)
    if fingerprint(shape) in known.fingerprints:
        return False
    return all(_similarity_below(shape, other) for other in known.structures)


def first_new(
    start: Genome, known: Known, rng: random.Random, keep: Sequence[str] = ()
) -> tuple[Genome, list[str]]:
    """The first new genome reached by stacking mutations on ``start``, with the changes.

    Up to :data:`MAX_ATTEMPTS` runs of up to :data:`MAX_STEPS` mutations each; when none is
    new, the first untried genome met (close to a known program: the loop will judge), else
    one mutation of ``start`` said to repeat a known structure. A genome that lacks a channel
    of ``keep`` is stepped through, never returned, unless nothing else is reached.
    """
    fallback: tuple[Genome, list[str]] | None = None
    for _ in range(MAX_ATTEMPTS):
        genome, changes = start, []
        for _ in range(MAX_STEPS):
            genome, change = mutate(genome, rng)
            changes.append(change)
            if genome in known.genomes or fingerprint(code_structure(genome)) in (
                known.fingerprints
            ):
                continue
            if not set(keep) <= set(genome.names):
                continue
            fallback = fallback or (genome, list(changes))
            if is_new(genome, known):
                return genome, changes
    if fallback is not None:
        return fallback
    return mutate(start, rng)[0], ["repeats a known structure (the genome space is spent)"]


def _similarity_below(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Whether difflib's ratio of ``a`` and ``b`` is below the novelty threshold."""
    if a == b:
        return False
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    # The cheap upper bounds settle most pairs; the exact ratio only when they cannot.
    return (
        matcher.real_quick_ratio() < NOVELTY_THRESHOLD
        or matcher.quick_ratio() < NOVELTY_THRESHOLD
        or matcher.ratio() < NOVELTY_THRESHOLD
    )


def new_edits(
    genome: Genome, offered: Sequence[str], known: Known, keep: Sequence[str] = ()
) -> list[Edit]:
    """The edits of ``genome`` whose result is new (:func:`is_new`), in the schema's order.

    ``keep``: channels no edit drops or swaps out.
    """
    return [
        e for e in possible_edits(genome, offered, keep) if is_new(apply_edit(genome, e)[0], known)
    ]
