"""Choosing the program a generation starts from: the one owner of parent choice.

Every strategy that starts from a parent asks here: the structural proposer mutates the best
frontier program that carries a genome (:func:`best_genome`); the edit proposer edits a parent
drawn by :func:`choose_parent`; the guided proposer draws the same way among the programs
that carry a genome (:func:`genome_parent`), passing over a parent whose every single edit
was tried (:func:`open_genome_parent`); the draft strategy's "combine" directive starts from
two frontier programs (:func:`combine_parents`).


:func:`choose_parent` draws from a generator seeded by the run's seed and the generation, so a
run (and its resumption) chooses the same parents. With probability :data:`EXPLORE` the parent
is an evaluated program off the frontier, drawn uniformly; otherwise it is a frontier program
drawn with weight ``1 / rank`` (the best most often), as evolutionary program searches mix
exploitation of the elite with exploration of the rest. The frontier is the one the state
shows (the search part only, :meth:`~embedding_ttc.search.loop.SearchLoop.state`), so a
choice never reads a validation number.

While the frontier shows nothing but the root (P0, whose body returns ``S``), there is nothing
to edit: a run given seeds (:mod:`~embedding_ttc.search.strategies.edit.seeds`, the reference
program as a search program) starts from one of them instead, and its children carry the
seed's name as their parent.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from dataclasses import dataclass

from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.records import LedgerRecord
from embedding_ttc.search.state import FrontierProgram, SearchState
from embedding_ttc.search.structural.edits import Edit
from embedding_ttc.search.structural.genome import BASE_GENOME, Genome, genome_from_source
from embedding_ttc.search.structural.known import GENOME_TAG, Known, new_edits

EXPLORE = 0.2
"""Share of generations whose parent is drawn from the evaluated programs off the frontier."""

COMBINE_EVERY = 3
"""Every this many generations, when two frontier programs exist, a draft combines two."""

SEED_MIX = 1_000_003
"""Multiplier that separates the generators of two runs' seeds (a prime above any generation)."""


@dataclass(frozen=True)
class Parent:
    """The program an edit starts from.

    Attributes:
        record: its ledger record, as the proposer sees it (``None`` for a seed).
        source: its program source.
        on_frontier: drawn from the frontier (else an exploration draw or a seed).
        name: its program id, or the seed's library name.

    """

    record: LedgerRecord | None
    source: str
    on_frontier: bool
    name: str = ""

    def __post_init__(self) -> None:
        if not self.name:
            if self.record is None:
                raise ValueError("a parent without a ledger record needs a name")
            object.__setattr__(self, "name", self.record.program_id)

    @property
    def is_seed(self) -> bool:
        """A library program offered as a start, not a program of the run."""
        return self.record is None


def choose_parent(
    state: SearchState,
    *,
    seed: int,
    explore: float = EXPLORE,
    seeds: Sequence[tuple[str, str]] = (),
) -> Parent:
    """The parent of ``state.generation``'s edit (see the module docstring).

    Args:
        state: what the proposer sees.
        seed: the proposer's seed.
        explore: the probability of an off-frontier parent, in ``[0, 1]``.
        seeds: ``(name, source)`` programs to start from while the frontier shows only the
            root.

    Raises:
        ValueError: ``explore`` outside ``[0, 1]``, or no program to start from.

    """
    if not 0.0 <= explore <= 1.0:
        raise ValueError(f"explore is a probability, got {explore}")
    rng = random.Random(seed * SEED_MIX + state.generation)
    draw = rng.random()
    if seeds and all(p.record.generation == 0 for p in state.frontier):
        name, seeded = seeds[rng.randrange(len(seeds))]
        return Parent(None, seeded, on_frontier=False, name=name)
    if draw < explore and state.read_source is not None:
        on_front = {p.record.program_id for p in state.frontier}
        others = [
            r
            for r in state.history
            if r.status is Status.OK and r.program_id not in on_front and r.source_path
        ]
        if others:
            record = others[rng.randrange(len(others))]
            source = state.read_source(record)
            if source is not None:
                return Parent(record, source, on_frontier=False)
    if not state.frontier:
        raise ValueError("the state has no frontier program to edit")
    weights = [1.0 / (rank + 1) for rank in range(len(state.frontier))]
    chosen = rng.choices(state.frontier, weights=weights)[0]
    return Parent(chosen.record, chosen.source, on_frontier=True)


def combine_parents(state: SearchState) -> tuple[str, str] | None:
    """The two frontier programs a draft combines this generation, or ``None``.

    Every :data:`COMBINE_EVERY`-th generation, when the frontier holds two programs besides P0,
    two of them are combined: the pairs in frontier order, rotating with the generation and
    the seed (deterministic, so a resumed run chooses the same).
    """
    combinable = [p.record.program_id for p in state.frontier if p.record.generation != 0]
    if len(combinable) < 2 or state.generation % COMBINE_EVERY != 0:
        return None
    pairs = [(a, b) for i, a in enumerate(combinable) for b in combinable[i + 1 :]]
    return pairs[(state.generation // COMBINE_EVERY + state.seed) % len(pairs)]


def best_genome(state: SearchState) -> tuple[Genome | None, str | None]:
    """The best frontier program that carries a genome, else none (and P0 as parent)."""
    for program in state.frontier:
        genome = genome_from_source(program.source)
        if genome is not None:
            return genome, program.record.program_id
    roots = [r.program_id for r in state.history if r.generation == 0]
    return None, roots[0] if roots else None


def genome_parent(
    state: SearchState, *, seed: int, explore: float = EXPLORE
) -> tuple[LedgerRecord, Genome] | None:
    """A parent that carries a genome (the edit proposer's policy over those), or ``None``."""
    frontier = tuple(
        FrontierProgram(p.record, p.source)
        for p in state.frontier
        if genome_from_source(p.source) is not None
    )
    if not frontier:
        return None
    tagged = tuple(r for r in state.history if GENOME_TAG.search(r.novelty))
    chosen = choose_parent(
        dataclasses.replace(state, frontier=frontier, history=tagged), seed=seed, explore=explore
    )
    assert chosen.record is not None  # no seeds: every parent is a ledger record
    genome = genome_from_source(chosen.source)
    if genome is None:  # an explored program whose file lost its header
        best = frontier[0]
        return best.record, genome_from_source(best.source) or BASE_GENOME
    return chosen.record, genome


def open_genome_parent(
    state: SearchState,
    spent: LedgerRecord,
    offered: Sequence[str],
    known: Known,
    keep: Sequence[str],
) -> tuple[LedgerRecord, Genome, list[Edit]] | None:
    """The best program after ``spent`` that still has a new single edit, with those edits.

    The programs that carry a genome, by their mean Δ on the search part (best first, the
    earlier of a tie first): a parent whose every single edit was tried is passed over, so the
    model keeps choosing instead of the structural proposer's random mutations.
    ``None`` when no program has an open edit.
    """
    if state.read_source is None:
        return None
    ranked = sorted(
        (r for r in state.history
         if r.status is Status.OK and r.mean_delta is not None and r.program_id != spent.program_id
         and GENOME_TAG.search(r.novelty)),
        key=lambda r: (-float(r.mean_delta or 0.0), r.generation),
    )  # fmt: skip
    for record in ranked:
        source = state.read_source(record)
        genome = genome_from_source(source) if source is not None else None
        if genome is None or not set(keep) <= set(genome.names):
            continue
        edits = new_edits(genome, offered, known, keep)
        if edits:
            return record, genome, edits
    return None
