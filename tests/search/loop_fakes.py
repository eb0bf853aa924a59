"""Honest fakes for the search loop's collaborators: small, deterministic, named as fakes.

None of them runs a program or calls a model. The proposer hands out scripted sources, the
checker refuses a marked source, the sandbox wraps a source without running it, the evaluator
reads a program's score from a table keyed by its id, and the clock moves only when the fake
evaluator says an evaluation took time. So a test of the loop reaches every stop (generations,
wall time, LLM spending) in milliseconds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from embedding_ttc.evaluation.comparison import WTL, Comparison
from embedding_ttc.program_files.checks.rules import ProgramRejected
from embedding_ttc.programs.base import Context, Matrix, Program
from embedding_ttc.programs.outcome import CandidateError
from embedding_ttc.runs.records import SuiteScore, TaskDelta
from embedding_ttc.search.proposer import ProposerError
from embedding_ttc.search.state import Proposal, SearchState, Usage

FAKE_TASKS = ("alpha", "beta")
REFUSE_MARKER = "# fake-checker: refuse"
_METHODS = ("cumsum", "argsort", "clip", "round", "transpose", "flatten", "ravel", "squeeze")


def fake_source(i: int, *, refuse: bool = False) -> str:
    """Program ``i`` of a family whose members are structurally distinct (similarity 0.86).

    With ``refuse``, the source carries :data:`REFUSE_MARKER`, which :class:`FakeChecker`
    refuses.
    """
    method = _METHODS[i % len(_METHODS)]
    body = "\n".join(f"    S = S.{method}()" for _ in range(4))
    marker = f"{REFUSE_MARKER}\n" if refuse else ""
    return (
        f'"""Fake program {i}."""\n{marker}\n\ndef program(Q, D, S, ctx):\n{body}\n    return S\n'
    )


class FakeClock:
    """A clock that stands still until :meth:`advance` moves it (a fake, for tests)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass."""
        self.now += seconds


@dataclass
class FakeProposer:
    """Hands out a scripted source per call, or raises a scripted :class:`ProposerError`.

    Every call costs ``usd`` and 100 tokens in, 10 out; the script is consumed in order.
    """

    script: Sequence[str | ProposerError]
    usd: float = 0.0
    name: str = "fake"
    states: list[SearchState] = field(default_factory=list)

    def propose(self, state: SearchState) -> Proposal:
        """The next scripted source as a proposal (raises a scripted error)."""
        self.states.append(state)
        item = self.script[len(self.states) - 1]
        if isinstance(item, ProposerError):
            raise item
        usage = Usage(model="fake-model", tokens_in=100, tokens_out=10, cost_usd=self.usd)
        return Proposal(
            source=item,
            novelty=f"fake {len(self.states)}",
            hypothesis="",
            usage=usage,
            proposer=self.name,
        )


@dataclass
class FakeChecker:
    """Refuses a source that carries :data:`REFUSE_MARKER`; records what it saw."""

    seen: list[str] = field(default_factory=list)

    def __call__(self, source: str) -> None:
        """Pass, or raise :class:`ProgramRejected` for a marked source."""
        self.seen.append(source)
        if REFUSE_MARKER in source:
            raise ProgramRejected("no-external-model: refused by the fake checker")


@dataclass(frozen=True)
class FakeProgram:
    """A source wrapped by :class:`FakeSandbox`; calling it is an error (nothing runs)."""

    name: str
    source: str

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        raise AssertionError("a fake program is scored by the fake evaluator, never run")


@dataclass
class FakeSandbox:
    """Wraps each source as a :class:`FakeProgram`; records the ids it was asked for."""

    built: list[str] = field(default_factory=list)

    def __call__(self, source: str, program_id: str) -> FakeProgram:
        """The source as a program named ``program_id``."""
        self.built.append(program_id)
        return FakeProgram(program_id, source)


@dataclass
class FakeEvaluator:
    """Scores a program from ``outcomes`` (its mean Δ, or the failure it raises), by id.

    Every task gets the same Δ; each evaluation advances ``clock`` by ``seconds``.
    """

    outcomes: Mapping[str, float | CandidateError]
    clock: FakeClock = field(default_factory=FakeClock)
    seconds: float = 0.0
    task_names: tuple[str, ...] = FAKE_TASKS
    views_collapsed: bool = False
    evaluated: list[str] = field(default_factory=list)
    held_aside: tuple[str, ...] = ()

    @property
    def seen_task_names(self) -> tuple[str, ...]:
        """The tasks but the ones held aside."""
        return tuple(t for t in self.task_names if t not in self.held_aside)

    def baseline_per_task(self) -> dict[str, TaskDelta]:
        """P0 on every fake task: nDCG@10 0.5, Δ 0, cost ratio 1."""
        return {name: _delta(0.0, 1.0) for name in self.task_names}

    def evaluate(self, program: Program) -> SuiteScore:
        """The scripted outcome of ``program.name``; the clock moves by ``seconds``."""
        self.evaluated.append(program.name)
        self.clock.advance(self.seconds)
        outcome = self.outcomes[program.name]
        if isinstance(outcome, CandidateError):
            raise outcome
        return SuiteScore(
            per_task={name: _delta(outcome, 1.5) for name in self.task_names},
            mean_delta=outcome,
            wtl=WTL.count([outcome] * len(self.task_names)),
            cost_ratio=1.5,
        )


def _delta(delta: float, cost_ratio: float) -> TaskDelta:
    return TaskDelta(
        comparison=Comparison(
            ndcg_at_10=0.5 + delta,
            baseline_ndcg_at_10=0.5,
            delta_ndcg_at_10=delta,
            wtl=WTL.count([delta]),  # as if each fake task had one query
        ),
        cost_ratio=cost_ratio,
        index_calls=10,
        query_calls=2,
    )
