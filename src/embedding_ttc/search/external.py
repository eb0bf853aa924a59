"""Programs written outside the search loop, judged and recorded by the loop itself.

A peer search system (OpenEvolve, a person with an editor) writes program files its own way;
to compare it with our proposers it must meet the same judge. :func:`evaluate_external` hands
one such source to a :class:`~embedding_ttc.search.loop.SearchLoop` as the proposal of one
generation (:meth:`~embedding_ttc.search.loop.SearchLoop.run_generation`), so the static
checks, the novelty test against everything registered, the sandbox, the evaluation on the
discovery suite and the ledger line are the loop's own. The record names the peer as its
proposer, so the frontier rules read the peer's run exactly like one of ours.

The ledger is re-read from disk under a lock before each generation: a peer may evaluate from
several processes (OpenEvolve evaluates its initial program in its controller and the rest in
worker processes), and each must number its generation after the others' lines.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from embedding_ttc.durable import file_lock
from embedding_ttc.runs.ledger import Ledger
from embedding_ttc.runs.records import LedgerRecord
from embedding_ttc.search.evaluator import SuiteEvaluator
from embedding_ttc.search.loop import Budget, SearchLoop
from embedding_ttc.search.proposer import ProposerError
from embedding_ttc.search.state import Proposal, SearchState, Usage

LOCK_NAME = "external"
"""``RUN_DIR/external.lock``: one external evaluation appends to a run directory at a time."""


@dataclass
class HandedOver:  # not frozen: the Proposer protocol's name is a plain attribute
    """A proposer that writes nothing: it hands over a source written elsewhere.

    Attributes:
        name: the peer's name, recorded as the candidate's proposer (``"openevolve"``).
        source: the program file's source (``None``: nothing handed over yet).
        model: the model the peer used, when it says (recorded as the candidate's model).
        novelty: the peer's description of the change, if any.
        parent_id: the recorded program the peer built on, if it names one.

    """

    name: str
    source: str | None = None
    model: str = ""
    novelty: str = ""
    parent_id: str | None = None

    def propose(self, state: SearchState) -> Proposal:
        """The handed-over source as the proposal of ``state.generation``.

        Raises:
            ProposerError: when no source was handed over.

        """
        if self.source is None:
            raise ProposerError(f"{self.name}: no program was handed over")
        return Proposal(
            source=self.source,
            novelty=self.novelty,
            hypothesis="",
            usage=Usage(model=self.model),
            proposer=self.name,
            parent_id=self.parent_id,
        )


def evaluate_external(
    loop: SearchLoop,
    source: str,
    *,
    proposer: str,
    model: str = "",
    novelty: str = "",
    parent_id: str | None = None,
) -> LedgerRecord:
    """Judge ``source`` as the loop's next generation and return its ledger record.

    Generation 0 (P0) is recorded first when the run directory has no ledger yet, as
    :meth:`~embedding_ttc.search.loop.SearchLoop.run` does. The loop's own proposer is not
    called; ``loop`` itself is left as it was.

    Args:
        loop: the loop of the run (:func:`~embedding_ttc.search.open.open_search`).
        source: the program file's source.
        proposer: the peer's name, recorded as the candidate's proposer.
        model: the model the peer used, recorded as the candidate's model.
        novelty: the peer's description of the change.
        parent_id: the recorded program the peer built on.

    Returns:
        The record appended to the ledger (any status: a rejected or failed candidate is a
        record with its reason, as in the loop).

    """
    run_dir = loop.ledger.run_dir
    with file_lock(run_dir / LOCK_NAME):
        fresh = replace(
            loop,
            ledger=Ledger(run_dir),
            proposer=HandedOver(proposer, source, model, novelty, parent_id),
        )
        _record_p0(fresh)
        return fresh.run_generation(fresh.ledger.last_generation + 1)


def recorded_p0(loop: SearchLoop) -> LedgerRecord:
    """Generation 0's record (P0), recorded first when the run directory has no ledger yet.

    A peer's starting program is P0 itself (OpenEvolve's initial program): its score is
    this record's, not a rejection as a near-duplicate of itself.
    """
    run_dir = loop.ledger.run_dir
    with file_lock(run_dir / LOCK_NAME):
        fresh = replace(loop, ledger=Ledger(run_dir))
        _record_p0(fresh)
        return fresh.ledger.records[0]


def reference_seen(loop: SearchLoop) -> tuple[float, float]:
    """The run's reference program as a proposer reads a record: ``(mean Δ, cost ratio)``.

    A peer that starts from the reference (OpenEvolve's initial program written as
    :data:`~embedding_ttc.search.strategies.edit.seeds.SEEDS` holds it) is given these
    numbers for its
    starting program, as the edit proposer's seed stands for the reference: the mean over
    tasks of the Δ against the loop's objective on each task's search part (the whole task
    without a split), and the cost ratio over the suite. Nothing is added to the ledger.

    Raises:
        ValueError: the loop's evaluator has no reference program.

    """
    evaluator = loop.evaluator
    score = evaluator.reference_score() if isinstance(evaluator, SuiteEvaluator) else None
    if score is None:
        raise ValueError("the run has no reference program (search with --reference)")
    deltas = []
    for name, task in score.per_task.items():
        delta = task.delta(loop.objective, "search" if task.parts else "all")
        if delta is None:
            raise ValueError(f"the reference has no {loop.objective} Δ on {name}")
        deltas.append(delta)
    return sum(deltas) / len(deltas), score.cost_ratio


def _record_p0(loop: SearchLoop) -> None:
    if not loop.ledger.records:
        loop.run(Budget(generations=0))  # records P0 and stops
