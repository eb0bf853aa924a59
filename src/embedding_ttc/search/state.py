"""What a proposer reads and writes: the search state, a proposal and what its call cost.

A proposer is given a :class:`SearchState` (the ledger's history, the frontier with sources,
the task names) and returns a :class:`Proposal`; the loop turns it into a ledger record
(:class:`~embedding_ttc.runs.records.LedgerRecord`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.records import LedgerRecord


@dataclass(frozen=True)
class Usage:
    """What one proposer call cost.

    Attributes:
        model: the model that answered (``"structural"`` for the LLM-free proposer).
        tokens_in: prompt tokens (0 when no LLM).
        tokens_out: completion tokens.
        seconds: wall time of the call.
        cost_usd: money spent, when the backend has a price (0.0 for local models).

    """

    model: str
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0
    cost_usd: float = 0.0

    @classmethod
    def total(cls, usages: Sequence[Usage]) -> Usage:
        """What several calls cost together (the model: the last call's)."""
        return cls(
            model=usages[-1].model if usages else "",
            tokens_in=sum(u.tokens_in for u in usages),
            tokens_out=sum(u.tokens_out for u in usages),
            seconds=sum(u.seconds for u in usages),
            cost_usd=sum(u.cost_usd for u in usages),
        )


@dataclass(frozen=True)
class Attempt:
    """A draft that failed before the real evaluation (pre-check, repair round).

    ``reply`` is the model's whole reply to that call, so the ledger keeps every draft.
    """

    status: Status
    reason: str
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0
    reply: str = ""


@dataclass(frozen=True)
class Proposal:
    """One candidate program as a proposer wrote it.

    Attributes:
        source: the program file's source, or ``None`` when the reply held no code.
        novelty: the one-sentence novelty claim ("" when missing).
        hypothesis: why it should help ("" when missing).
        parent_id: the frontier program it builds on, if any.
        usage: what the call cost.
        proposer: the proposer's name (``"openai"``, ``"structural"`` ...).
        raw_reply: the model's whole reply (kept for forensics).
        reason: why there is no program, when ``source`` is ``None`` ("" otherwise).
        attempts: earlier drafts of the same generation that failed a pre-check, with reasons.

    """

    source: str | None
    novelty: str
    hypothesis: str
    usage: Usage
    proposer: str
    parent_id: str | None = None
    raw_reply: str = ""
    reason: str = ""
    attempts: tuple[Attempt, ...] = field(default=())


@dataclass(frozen=True)
class FrontierProgram:
    """A program on the frontier, with its source (what a proposer reads)."""

    record: LedgerRecord
    source: str


@dataclass(frozen=True)
class SearchState:
    """Everything a proposer may look at before writing generation ``generation``.

    Attributes:
        generation: the generation about to be proposed (1-based).
        history: every ledger record so far, in order.
        frontier: the current top-k frontier programs with their sources, best first.
        tasks: the discovery tasks' names, in suite order.
        seed: the run's seed (proposers derive their choices from it and the history).
        views_collapsed: the encoder has one realisation for every view name, so a program
            that scores under another view sees S again.
        read_source: a record's program source (``None`` when it has none), for proposers
            that start from a program off the frontier; ``None`` when the state has no ledger.

    """

    generation: int
    history: tuple[LedgerRecord, ...]
    frontier: tuple[FrontierProgram, ...]
    tasks: tuple[str, ...]
    seed: int = 0
    views_collapsed: bool = False
    read_source: Callable[[LedgerRecord], str | None] | None = None
