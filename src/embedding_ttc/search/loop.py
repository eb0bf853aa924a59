"""The agentic search loop (paper §3, Algorithm 1): propose, check, evaluate, record.

For g = 1..G: the proposer reads the state derived from the ledger (history and the top-k
frontier with sources) and writes one program; the program is saved, checked statically
(constraints 1, 2 and 4), compared with every registered program (constraint 5), run in the
sandbox on every discovery task (constraints 3 and 6), and its record, with its lesson
(:mod:`~embedding_ttc.search.lessons`), is appended to the ledger. Generation 0 is P0, so
the registry and the frontier start at ``{P0}`` as in the paper.

The loop builds none of its collaborators: the proposer, the static checker, the sandbox
factory, the evaluator (the seams of :mod:`~embedding_ttc.search.seams`), the ledger and the
clock are passed in. Every failure of a candidate (no code, a rejected construct, a
near-duplicate, a timeout, a crash, invalid output, a proposer error) becomes a record with a
status and a reason, and the loop goes on.

Resume: the ledger is the only state. Re-running continues at ``last generation + 1``; a
generation killed before its line was written runs again from the start.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from embedding_ttc.evaluation.comparison import WTL
from embedding_ttc.programs.outcome import CandidateError, Status
from embedding_ttc.runs.frontier import Frontier, frontier
from embedding_ttc.runs.ledger import Ledger
from embedding_ttc.runs.records import LedgerRecord, Objective
from embedding_ttc.search.lessons import lesson
from embedding_ttc.search.novelty import (
    closest,
    fingerprint,
    registered_structures,
    structure,
)
from embedding_ttc.search.proposer import Proposer, ProposerError
from embedding_ttc.search.seams import Checker, Evaluator, SandboxFactory
from embedding_ttc.search.state import FrontierProgram, Proposal, SearchState, Usage

P0_SOURCE = '''\
"""P0: the cosine baseline. Returns S unchanged (as a new matrix)."""


def program(Q, D, S, ctx):
    return S.copy()
'''

Clock = Callable[[], float]
"""Seconds from an arbitrary origin (``time.monotonic``; a test passes a fake)."""


@dataclass(frozen=True)
class Budget:
    """When the loop stops: whichever limit is reached first (``None``: no limit).

    Attributes:
        generations: the last generation to run (G).
        wall_seconds: no new generation starts after this much time in this process.
        llm_usd: no new generation starts once the ledger's LLM spending reaches this.

    """

    generations: int
    wall_seconds: float | None = None
    llm_usd: float | None = None


@dataclass
class LoopEvents:
    """Callbacks for live progress (all optional)."""

    on_record: Callable[[LedgerRecord, Frontier], None] | None = None
    on_stop: Callable[[str], None] | None = None


@dataclass
class SearchLoop:
    """Algorithm 1 over passed-in collaborators.

    Attributes:
        proposer: writes one program per generation.
        checker: static checks of a source.
        sandbox: turns a checked source into a contained program.
        evaluator: scores a program on every discovery task.
        ledger: the run's memory.
        seed: the run's seed (given to the proposer through the state).
        top_k: how many frontier programs the proposer sees with their source.
        registered: structures of programs registered outside the ledger (the library).
        clock: what the loop reads time from (the wall-time budget, a record's seconds).
        objective: the baseline of the Δ a proposer reads (``p0`` or ``reference``).
        pick_rule: the sha256 of the run's pick rule file, stamped on every record it
            appends (``None``: the run has no pick rule).

    """

    proposer: Proposer
    checker: Checker
    sandbox: SandboxFactory
    evaluator: Evaluator
    ledger: Ledger
    seed: int = 0
    top_k: int = 5
    registered: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    clock: Clock = time.monotonic
    objective: Objective = "p0"
    pick_rule: str | None = None

    def _append(self, record: LedgerRecord) -> None:
        """Append ``record``, stamped with the run's pick rule digest when it has one."""
        if self.pick_rule is not None:
            record = record.model_copy(update={"pick_rule": self.pick_rule})
        self.ledger.append(record)

    def state(self, generation: int) -> SearchState:
        """What the proposer sees before writing ``generation``.

        Only the search part of the run's split, against the run's objective: every record
        is :meth:`~embedding_ttc.runs.records.LedgerRecord.seen_by_proposer`, and the
        frontier shown is the compute rule over those numbers. Nothing a proposer reads
        (history, frontier, the directives derived from them) holds a validation number.
        """
        records = tuple(r.seen_by_proposer(self.objective) for r in self.ledger.records)
        front = frontier(records).top(self.top_k)
        programs = []
        for record in front:
            source = self.ledger.source(record)
            if source is not None:
                programs.append(FrontierProgram(record, source))
        return SearchState(
            generation=generation,
            history=records,
            frontier=tuple(programs),
            tasks=self.evaluator.seen_task_names,
            seed=self.seed,
            views_collapsed=self.evaluator.views_collapsed,
            read_source=self.ledger.source,
        )

    def _p0(self) -> LedgerRecord:
        """Generation 0: P0, the root of the registry and the frontier."""
        path = self.ledger.save_source("g0000-P0", P0_SOURCE)
        per_task = self.evaluator.baseline_per_task()
        return LedgerRecord(
            generation=0,
            program_id="g0000-P0",
            status=Status.OK,
            per_task=per_task,
            mean_delta=0.0,
            wtl=WTL.count(d.comparison.delta_ndcg_at_10 for d in per_task.values()),
            cost_ratio=1.0,
            query_time_cost_ratio=1.0,
            novelty="the cosine baseline",
            proposer="library",
            source_path=str(path.relative_to(self.ledger.run_dir)),
            fingerprint=fingerprint(structure(P0_SOURCE)),
        )

    def run_generation(self, generation: int) -> LedgerRecord:
        """Propose, check and evaluate one candidate; append and return its record."""
        started = self.clock()
        program_id = f"g{generation:04d}"
        try:
            proposal = self.proposer.propose(self.state(generation))
        except ProposerError as exc:
            usage = exc.usage or Usage(model="")
            record = LedgerRecord(
                generation=generation,
                program_id=program_id,
                status=Status.PROPOSER_ERROR,
                reason=str(exc)[:2000],
                proposer=self.proposer.name,
                model=usage.model,
                tokens_in=usage.tokens_in,
                tokens_out=usage.tokens_out,
                llm_seconds=usage.seconds,
                cost_usd=usage.cost_usd,
                seconds=self.clock() - started,
            )
            self._append(record)
            return record
        fields = self._judge(proposal, program_id)
        record = LedgerRecord(
            generation=generation,
            program_id=program_id,
            parent_id=proposal.parent_id,
            novelty=proposal.novelty,
            hypothesis=proposal.hypothesis,
            proposer=proposal.proposer,
            model=proposal.usage.model,
            tokens_in=proposal.usage.tokens_in + sum(a.tokens_in for a in proposal.attempts),
            tokens_out=proposal.usage.tokens_out + sum(a.tokens_out for a in proposal.attempts),
            llm_seconds=proposal.usage.seconds + sum(a.seconds for a in proposal.attempts),
            cost_usd=proposal.usage.cost_usd,
            seconds=self.clock() - started,
            attempts=[
                {
                    "status": a.status.value,
                    "reason": a.reason,
                    "tokens_in": a.tokens_in,
                    "tokens_out": a.tokens_out,
                    "seconds": a.seconds,
                    "reply": a.reply,
                }
                for a in proposal.attempts
            ],
            **fields,
        )
        record = record.model_copy(update={"lesson": self._lesson(record)})
        self._append(record)
        return record

    def _lesson(self, record: LedgerRecord) -> str:
        """``record``'s lesson, from its and its parent's search-part numbers only."""
        parent = next((r for r in self.ledger.records if r.program_id == record.parent_id), None)
        seen = parent.seen_by_proposer(self.objective) if parent is not None else None
        return lesson(record.seen_by_proposer(self.objective), seen, self.objective)

    def _judge(self, proposal: Proposal, program_id: str) -> dict[str, Any]:
        """Checks and evaluation of one proposal: the record's status and metric fields."""
        if proposal.source is None or not proposal.source.strip():
            # The last reply is kept: nothing else of it reaches the ledger.
            reason = proposal.reason or "parse: the reply contains no program"
            return {"status": Status.REJECTED, "reason": reason, "reply": proposal.raw_reply}
        path = self.ledger.save_source(program_id, proposal.source)
        out: dict[str, Any] = {"source_path": str(path.relative_to(self.ledger.run_dir))}
        try:
            self.checker(proposal.source)
        except CandidateError as exc:
            return {**out, "status": exc.status, "reason": exc.reason}
        except Exception as exc:
            return {**out, "status": Status.REJECTED, "reason": f"{type(exc).__name__}: {exc}"}
        try:
            shape = structure(proposal.source)
        except SyntaxError as exc:
            return {**out, "status": Status.REJECTED, "reason": f"parse: {exc}"}
        out["fingerprint"] = fingerprint(shape)
        near = closest(shape, registered_structures(self.ledger, self.registered))
        if near.duplicate:
            reason = f"novel: near-duplicate of {near.name} (similarity {near.similarity:.3f})"
            return {**out, "status": Status.REJECTED, "reason": reason}
        try:
            score = self.evaluator.evaluate(self.sandbox(proposal.source, program_id))
        except CandidateError as exc:
            return {**out, "status": exc.status, "reason": exc.reason[:4000]}
        return {
            **out,
            "status": Status.OK,
            "per_task": score.per_task,
            "mean_delta": score.mean_delta,
            "wtl": score.wtl,
            "cost_ratio": score.cost_ratio,
            "query_time_cost_ratio": score.query_time_cost_ratio,
        }

    def run(self, budget: Budget, events: LoopEvents | None = None) -> Frontier:
        """Run (or resume) the search until a budget is reached; return the frontier."""
        events = events or LoopEvents()
        started = self.clock()
        if not self.ledger.records:
            record = self._p0()
            self._append(record)
            if events.on_record:
                events.on_record(record, frontier(self.ledger.records))
        reason = f"reached generation {budget.generations}"
        for generation in range(self.ledger.last_generation + 1, budget.generations + 1):
            if budget.wall_seconds is not None and self.clock() - started > budget.wall_seconds:
                reason = f"wall-time budget of {budget.wall_seconds:g} s spent"
                break
            spent = sum(r.cost_usd for r in self.ledger.records)
            if budget.llm_usd is not None and spent >= budget.llm_usd:
                reason = f"LLM budget of ${budget.llm_usd:g} spent (${spent:.2f})"
                break
            record = self.run_generation(generation)
            if events.on_record:
                events.on_record(record, frontier(self.ledger.records))
        if events.on_stop:
            events.on_stop(reason)
        return frontier(self.ledger.records)
