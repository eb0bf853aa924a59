"""The search's seams: what the loop (and the pre-check) call on the collaborators they are given.

The loop builds none of its collaborators (house style: pass collaborators in). Besides the
proposer (:class:`~embedding_ttc.search.proposer.Proposer`) and the ledger, it is given:

* a :data:`Checker`, the static checks of a source
  (:func:`~embedding_ttc.program_files.checks.source.check_source` with the known task names);
* a :data:`SandboxFactory`, turning a checked source into a contained program
  (:class:`~embedding_ttc.program_files.sandbox.program.SandboxedProgram`);
* an :class:`Evaluator`, scoring a program on every discovery task
  (:class:`~embedding_ttc.search.evaluator.SuiteEvaluator`, which is itself given an
  :class:`~embedding_ttc.executors.Executor`: in this process or on Ray).

Each is small, so a test passes fakes that are honest about being fakes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from embedding_ttc.programs.base import Program
from embedding_ttc.runs.records import SuiteScore, TaskDelta

Checker = Callable[[str], object]
"""Static checks: returns, or raises :class:`~embedding_ttc.programs.outcome.CandidateError`."""

SandboxFactory = Callable[[str, str], Program]
"""``(source, program_id) -> Program`` that runs the source contained."""


class Evaluator(Protocol):
    """Scores candidates on the discovery suite (what the loop calls)."""

    @property
    def task_names(self) -> tuple[str, ...]:
        """The tasks' names in suite order."""
        ...

    @property
    def seen_task_names(self) -> tuple[str, ...]:
        """The tasks a proposer may know of (all but the run's validation tasks)."""
        ...

    @property
    def views_collapsed(self) -> bool:
        """Whether the encoder realises every view name the same way."""
        ...

    def baseline_per_task(self) -> dict[str, TaskDelta]:
        """P0's outcome on every task (Δ 0, cost ratio 1), in suite order."""
        ...

    def evaluate(self, program: Program) -> SuiteScore:
        """Run ``program`` once on every task and score it against P0.

        Raises:
            CandidateError: the program failed on some task.

        """
        ...
