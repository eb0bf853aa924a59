"""The structural proposer: the next new genome, mutated from the best frontier program's."""

from __future__ import annotations

import hashlib
import random
import time

from embedding_ttc.search.population import best_genome
from embedding_ttc.search.state import Proposal, SearchState, Usage
from embedding_ttc.search.structural.catalogue import CHANNELS
from embedding_ttc.search.structural.genome import (
    BASE_GENOME,
    Genome,
    fusion_label,
)
from embedding_ttc.search.structural.known import (
    Known,
    first_new,
    is_new,
    known_programs,
)
from embedding_ttc.search.structural.render import render_program


class StructuralProposer:
    """Composes and mutates primitive-based programs; needs no LLM (see the module docstring).

    Args:
        seed: the proposer's seed, combined with the run's seed, the generation and the
            history.
        check_library: also keep proposals structurally distinct from the library programs
            (they are registered programs for the novelty check).

    """

    name = "structural"

    def __init__(self, seed: int = 0, *, check_library: bool = True) -> None:
        self.seed = seed
        self.check_library = check_library

    def propose(self, state: SearchState) -> Proposal:
        """Write the next genome's program (deterministic given seed, generation, history)."""
        started = time.perf_counter()
        rng = random.Random(self._seed_for(state))
        known = self._known(state)
        parent_genome, parent_id = best_genome(state)
        genome, changes = self._search(parent_genome, state.generation, known, rng)
        mutated_from = parent_id if parent_genome is not None else None
        novelty, hypothesis = claims(genome, changes, mutated_from)
        source = render_program(genome, novelty=novelty, hypothesis=hypothesis, parent_id=parent_id)
        return Proposal(
            source=source,
            novelty=novelty,
            hypothesis=hypothesis,
            usage=Usage(model="structural", seconds=time.perf_counter() - started),
            proposer=self.name,
            parent_id=parent_id,
            raw_reply=source,
        )

    def _seed_for(self, state: SearchState) -> int:
        digest = hashlib.blake2b(digest_size=16)
        digest.update(f"{self.seed}:{state.seed}:{state.generation}".encode())
        for record in state.history:
            fields = (record.program_id, record.status.value, record.fingerprint, record.novelty)
            digest.update("|".join(str(f) for f in fields).encode())
        return int.from_bytes(digest.digest(), "big")

    def _known(self, state: SearchState) -> Known:
        return known_programs(state, library=self.check_library)

    def _search(
        self, parent: Genome | None, generation: int, known: Known, rng: random.Random
    ) -> tuple[Genome, list[str]]:
        """The first new genome reached by stacking mutations on the parent (or the base)."""
        if parent is None and generation <= 1 and is_new(BASE_GENOME, known):
            return BASE_GENOME, []
        return first_new(parent or BASE_GENOME, known, rng)


def claims(genome: Genome, changes: list[str], mutated_from: str | None) -> tuple[str, str]:
    """The Novelty and Hypothesis sentences (the novelty carries the genome tag).

    ``mutated_from`` is the program whose genome was mutated; ``None`` for the base genome.
    """
    labels = [CHANNELS[c].label for c in genome.names]
    if changes:
        where = f"Relative to {mutated_from}, " if mutated_from else "Relative to the base genome, "
        novelty = where + "; ".join(changes)
    else:
        novelty = f"Fuses {_join(labels)} by {fusion_label(genome)}"
    novelty += f" [genome {genome.key()}]."
    reasons = [CHANNELS[c].rationale for c in genome.names if c != "dense"]
    hypothesis = (
        f"Fusing {_join(labels)} by {fusion_label(genome)} should raise nDCG@10 on "
        f"every task, because {'; '.join(reasons) or 'the channels err differently'}"
    )
    if genome.rounds:
        hypothesis += (
            f"; {genome.rounds} {genome.refine} feedback round"
            f"{'s' if genome.rounds > 1 else ''} then pull each query toward its fused top-K"
        )
    return novelty, hypothesis + "."


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
