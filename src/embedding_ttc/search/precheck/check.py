"""A cheap pre-check of a drafted program on a tiny synthetic task, before the real evaluation.

A small model's drafts fail mostly on shapes, indexing and undefined names. Running the real
evaluation (every discovery task) to find that out costs minutes; :func:`precheck` finds it in
about a second, so a drafting proposer can send the error back to the model and ask for a fix
(:mod:`~embedding_ttc.search.strategies.draft.proposer`). The steps, each ending the check on
failure:

1. ``parse``: the source parses as Python;
2. the static checks the loop applies (``checker``, e.g.
   :func:`~embedding_ttc.program_files.checks.source.check_source`): constraints 1, 2 and 4;
3. novelty (constraint 5): :func:`~embedding_ttc.search.novelty.closest` against the
   registered structures, at :data:`~embedding_ttc.search.novelty.NOVELTY_THRESHOLD`;
4. the sandbox on the synthetic task
   (:func:`~embedding_ttc.search.precheck.synthetic.synthetic_task`) twice without
   candidates, which must give bit-identical scores (constraint 3), then once on its pool
   variant, where each query ranks only its own candidates (``ctx.candidates`` is set). Each
   run goes through :func:`~embedding_ttc.evaluation.evaluate.run_programs`, the path of the
   real evaluation: the same Context, a metered ``encode_fn`` over the real encoder, and the
   same output check (shape |Q|×|D|, finite).

Passing the pre-check does not mean the program will pass the evaluation (real tasks are
larger and longer), and failing it is only advice: the loop judges whatever it is given.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from embedding_ttc.encoders.base import Encoder
from embedding_ttc.evaluation.evaluate import run_programs
from embedding_ttc.program_files.sandbox.limits import SandboxLimits
from embedding_ttc.program_files.sandbox.program import SandboxedProgram
from embedding_ttc.programs.base import Program
from embedding_ttc.programs.outcome import CandidateError, Status
from embedding_ttc.programs.output import ProgramOutputError
from embedding_ttc.runs.ledger import Ledger
from embedding_ttc.search.novelty import closest, registered_structures, structure
from embedding_ttc.search.precheck.synthetic import synthetic_task
from embedding_ttc.search.prompts.examples import example_structures
from embedding_ttc.search.seams import Checker, SandboxFactory

__all__ = [
    "PRECHECK_WALL_SECONDS",
    "PrecheckResult",
    "ledger_precheck",
    "precheck",
    "precheck_limits",
]

PRECHECK_WALL_SECONDS = 20.0
"""Wall-time limit of one sandboxed run on the synthetic task (it has 12 short documents)."""

PRECHECK_NAME = "precheck"
"""The program name in the sandbox and in error messages."""


@dataclass(frozen=True)
class PrecheckResult:
    """The outcome of a pre-check.

    Attributes:
        ok: whether every step passed.
        status: ``ok``, or the status the failure would have in the ledger.
        reason: one line or a few: which step failed and why ("" when ok).
        traceback: the program's innermost frames when it raised, else "".

    """

    ok: bool
    status: Status
    reason: str = ""
    traceback: str = ""


PASSED = PrecheckResult(ok=True, status=Status.OK)

Precheck = Callable[[str], PrecheckResult]
"""A run's pre-check of a draft: ``source -> PrecheckResult``."""

_HARNESS_IMPORT = re.compile(r"tried to import 'numpy\.")
"""A refused import of a numpy submodule comes from numpy itself, not from the program.

numpy 2.4's ``np.unique`` imports ``numpy.ma`` lazily, and the sandbox's child refuses every
import after its audit hook is in place; it preloads the modules a program names, not those
numpy loads on demand. So every primitive that calls ``np.unique`` on candidates
(``top_k_indices``, ``ranks``, ``rrf`` ... with a mask) is refused on a task with candidates.
That is a limitation of the harness, which the program cannot fix: the pre-check lets it
pass, with the reason kept as a note (the loop will judge it on the real tasks)."""


# ---------------------------------------------------------------------------------------------
# The pre-check


def precheck_limits(limits: SandboxLimits) -> SandboxLimits:
    """``limits`` with the wall time cut to :data:`PRECHECK_WALL_SECONDS` (at most)."""
    return dataclasses.replace(
        limits, wall_seconds=min(limits.wall_seconds, PRECHECK_WALL_SECONDS), cpu_seconds=None
    )


def ledger_precheck(
    checker: Checker,
    library: Mapping[str, tuple[str, ...]],
    ledger: Ledger,
    limits: SandboxLimits,
    encoder: Encoder,
) -> Callable[[str], PrecheckResult]:
    """The drafting pre-check over a run's own checker, registry, limits and encoder.

    The registered structures are read from the ledger at each call (as the loop does), plus
    the compact prompt's worked examples, so a copy of an example is sent back for repair; the
    sandbox runs with :func:`precheck_limits`.
    """
    short = precheck_limits(limits)

    def check(source: str) -> PrecheckResult:
        registered = registered_structures(ledger, {**library, **example_structures()})
        return precheck(
            source,
            checker=checker,
            registered=registered,
            sandbox_factory=lambda src, name: SandboxedProgram(src, name, short),
            encoder=encoder,
        )

    return check


def precheck(
    source: str,
    *,
    checker: Checker,
    registered: Mapping[str, tuple[str, ...]],
    sandbox_factory: SandboxFactory,
    encoder: Encoder,
) -> PrecheckResult:
    """Check a drafted program cheaply: parse, static checks, novelty, synthetic runs.

    Args:
        source: the program file's source.
        checker: the loop's static checks (raises
            :class:`~embedding_ttc.programs.outcome.CandidateError` on a violation).
        registered: the structures the candidate must differ from.
        sandbox_factory: ``(source, name) -> Program`` running the source contained (with
            short limits, see :func:`precheck_limits`).
        encoder: the encoder the search uses (its encodes of the synthetic texts are cached).

    Returns:
        The result; ``reason`` names the failed step and ``traceback`` holds the program's
        frames when it raised.

    """
    try:
        ast.parse(source)
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        line = (exc.text or "").rstrip()
        return PrecheckResult(
            ok=False,
            status=Status.REJECTED,
            reason=f"parse: {exc.msg}{where}",
            traceback=f"    {line}" if line else "",
        )
    try:
        checker(source)
    except CandidateError as exc:
        return PrecheckResult(ok=False, status=exc.status, reason=exc.reason)
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}"
        return PrecheckResult(ok=False, status=Status.REJECTED, reason=reason)
    near = closest(structure(source), registered)
    if near.duplicate:
        return PrecheckResult(
            ok=False,
            status=Status.REJECTED,
            reason=f"novel: near-duplicate of {near.name} (similarity {near.similarity:.3f}); "
            "change the program's structure, not only its constants or names",
        )
    program = sandbox_factory(source, PRECHECK_NAME)
    return _run_synthetic(program, encoder)


def _run_synthetic(program: Program, encoder: Encoder) -> PrecheckResult:
    full, pool = synthetic_task(), synthetic_task(pool=True)
    runs: list[list[np.ndarray]] = []
    for task, label in ((full, "full corpus"), (full, "full corpus, again"), (pool, "pools")):
        try:
            run = next(run_programs([program], task, encoder))
        except Exception as exc:
            where = f"synthetic task ({label}, {task.n_queries} queries x {task.n_docs} documents)"
            failure = _failure(exc, where)
            if task.is_pool and _HARNESS_IMPORT.search(failure.reason):
                return PrecheckResult(ok=True, status=Status.OK, reason=f"note: {failure.reason}")
            return failure
        runs.append([values for _, values in run.rows])
        if len(runs) == 2 and any(
            not np.array_equal(a, b) for a, b in zip(runs[0], runs[1], strict=True)
        ):
            return PrecheckResult(
                ok=False,
                status=Status.REJECTED,
                reason="deterministic: two runs on the synthetic task gave different scores",
            )
    return PASSED


def _failure(exc: Exception, where: str) -> PrecheckResult:
    """A sandbox failure (or any error) as a result: status, first lines, traceback apart."""
    if isinstance(exc, CandidateError):
        status, text = exc.status, exc.reason
    elif isinstance(exc, ProgramOutputError):
        status, text = Status.INVALID_OUTPUT, str(exc)
    else:
        status, text = Status.CRASHED, f"{type(exc).__name__}: {exc}"
    message, marker, frames = text.partition("Traceback (innermost last):")
    return PrecheckResult(
        ok=False,
        status=status,
        reason=f"{where}: {message.strip()}",
        traceback=(marker + frames).strip() if marker else "",
    )
