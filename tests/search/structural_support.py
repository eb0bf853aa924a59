"""Shared by the structural proposer's tests: a P0 root, a seeded simulated run, a small task.

The simulated run is a search whose evaluations are a fake score drawn from a digest of each
program's source (honestly a fake: it runs nothing), so the proposer's choices from its
frontier can be replayed in milliseconds.
"""

from __future__ import annotations

import hashlib
from functools import cache

import numpy as np

from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.records import LedgerRecord
from embedding_ttc.search.novelty import fingerprint, structure
from embedding_ttc.search.state import FrontierProgram, SearchState
from embedding_ttc.search.structural.proposer import StructuralProposer
from embedding_ttc.tasks.task import RetrievalTask
from ledger_records import evaluated

P0_SOURCE = '"""P0: the cosine baseline."""\n\n\ndef program(Q, D, S, ctx):\n    return S.copy()\n'
TASKS = ("alpha", "beta")


def p0_record() -> LedgerRecord:
    return evaluated(
        0,
        "g0000-P0",
        dict.fromkeys(TASKS, 0.0),
        proposer="library",
        fingerprint=fingerprint(structure(P0_SOURCE)),
    )


def fake_mean_delta(source: str) -> float:
    """A deterministic stand-in for an evaluation: a score in [-0.01, 0.03) from the source."""
    h = int.from_bytes(hashlib.blake2b(source.encode(), digest_size=4).digest(), "big")
    return -0.01 + 0.04 * h / 2**32


def state_at(generation: int, records: list[LedgerRecord], sources: dict[str, str]):
    ok = [r for r in records if r.status == Status.OK]
    best = sorted(ok, key=lambda r: -(r.mean_delta or 0.0))[:5]
    frontier = tuple(FrontierProgram(r, sources[r.program_id]) for r in best)
    return SearchState(generation, tuple(records), frontier, TASKS, seed=11)


@cache
def simulated_run(generations: int = 30) -> tuple[tuple[SearchState, str], ...]:
    """A search of ``generations`` structural proposals, each 'evaluated' by a fake score."""
    records = [p0_record()]
    sources = {"g0000-P0": P0_SOURCE}
    proposer = StructuralProposer(seed=1)
    out = []
    for generation in range(1, generations + 1):
        state = state_at(generation, records, sources)
        proposal = proposer.propose(state)
        assert proposal.source is not None
        program_id = f"g{generation:04d}"
        sources[program_id] = proposal.source
        score = fake_mean_delta(proposal.source)
        records.append(
            evaluated(
                generation,
                program_id,
                dict.fromkeys(TASKS, score),
                parent_id=proposal.parent_id,
                cost_ratio=1.5,
                novelty=proposal.novelty,
                hypothesis=proposal.hypothesis,
                proposer=proposal.proposer,
                fingerprint=fingerprint(structure(proposal.source)),
            )
        )
        out.append((state, proposal.source))
    return tuple(out)


DOCS = [
    "Cats sleep most of the day. They purr when content.\n\nA cat naps in the sun.",
    "Interest rates rose again. Inflation stayed high. Markets fell sharply on the news.",
    "Bake bread with flour and water. Knead the dough. Let it rise overnight.",
    "The court held that the statute applies. The appeal was dismissed.",
    "Dogs bark at strangers. A dog needs daily walks. Puppies chew shoes.",
    "Solar panels convert light.",
    "A decoy about cats, rates, bread, courts, dogs and solar power at once.",
]
QUERIES = ["why do cats sleep so much", "inflation and interest rates", "how to bake bread"]


def synthetic_task() -> RetrievalTask:
    ids = [f"d{i}" for i in range(len(DOCS))]
    return RetrievalTask(
        name="structural-synthetic",
        doc_ids=ids,
        doc_titles=[""] * len(ids),
        doc_bodies=DOCS,
        query_ids=["q1", "q2", "q3"],
        query_texts=QUERIES,
        qrels={"q1": {"d0": 1}, "q2": {"d1": 1}, "q3": {"d2": 1}},
    )


CANDIDATES = (np.array([0, 1, 4]), np.array([1, 3, 5, 0]), np.array([2, 0, 5]))
"""Per query of :func:`synthetic_task`, its candidate documents (a reranking call)."""
