"""A cheap pre-check of a drafted program on a tiny synthetic task, before the real evaluation.

A small model's drafts fail mostly on shapes, indexing and undefined names. Running the real
evaluation (every discovery task) to find that out costs minutes; :func:`precheck` finds it in
about a second, so a drafting proposer can send the error back to the model and ask for a fix
(:mod:`~embedding_ttc.search.proposers.drafting`). The steps, each ending the check on failure:

1. ``parse``: the source parses as Python;
2. the static checks the loop applies (``checker``, e.g.
   :func:`~embedding_ttc.search.checks.check_source`): constraints 1, 2 and 4;
3. novelty (constraint 5): :func:`~embedding_ttc.search.novelty.closest` against the
   registered structures, at :data:`~embedding_ttc.search.novelty.NOVELTY_THRESHOLD`;
4. the sandbox on :func:`synthetic_task` twice without candidates, which must give
   bit-identical scores (constraint 3), then once on its pool variant, where each query ranks
   only its own candidates (``ctx.candidates`` is set). Each run goes through
   :func:`~embedding_ttc.evaluation.evaluate.run_programs`, the path of the real evaluation:
   the same Context, a metered ``encode_fn`` over the real encoder, and the same output check
   (shape |Q|×|D|, finite).

Passing the pre-check does not mean the program will pass the evaluation (real tasks are
larger and longer), and failing it is only advice: the loop judges whatever it is given.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from embedding_ttc.encoders.base import Encoder
from embedding_ttc.evaluation.evaluate import ProgramOutputError, run_programs
from embedding_ttc.programs.base import Program
from embedding_ttc.search.interface import CandidateError, Status
from embedding_ttc.search.ledger import Ledger
from embedding_ttc.search.novelty import closest, structure
from embedding_ttc.search.sandbox import SandboxLimits
from embedding_ttc.search.seams import Checker, SandboxFactory
from embedding_ttc.tasks.task import RetrievalTask

__all__ = [
    "PRECHECK_WALL_SECONDS",
    "PrecheckResult",
    "precheck",
    "precheck_limits",
    "registered_structures",
    "synthetic_task",
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

_HARNESS_IMPORT = re.compile(r"tried to import 'numpy\.")
"""A refused import of a numpy submodule comes from numpy itself, not from the program.

numpy 2.4's ``np.unique`` imports ``numpy.ma`` lazily, and the sandbox's child refuses every
import after its audit hook is in place; it preloads the modules a program names, not those
numpy loads on demand. So every primitive that calls ``np.unique`` on candidates
(``top_k_indices``, ``ranks``, ``rrf`` ... with a mask) is refused on a task with candidates.
That is a limitation of the harness, which the program cannot fix: the pre-check lets it
pass, with the reason kept as a note (the loop will judge it on the real tasks)."""


# ---------------------------------------------------------------------------------------------
# The synthetic task

_DOCUMENTS: tuple[tuple[str, str], ...] = (
    (
        "Solar panels",
        "Solar panels turn sunlight into electricity. Their output falls on cloudy days. "
        "Most rooftop panels last about twenty-five years.",
    ),
    (
        "",
        "A battery stores the electricity that solar panels produce during the day. At night "
        "the house draws power from the battery.\n\nLithium batteries lose capacity as they "
        "age.",
    ),
    (
        "Wind turbines",
        "Wind turbines produce electricity when the wind blows. Offshore turbines face "
        "stronger and steadier wind than turbines on land.",
    ),
    (
        "River floods",
        "Heavy rain makes a river rise above its banks. Floods damage houses and farms near "
        "the river. Levees and wetlands slow the water down.",
    ),
    (
        "",
        "Farmers near the river plant crops after the flood season. The flood leaves fertile "
        "soil on the fields.",
    ),
    (
        "Drought",
        "A drought is a long period without rain. Crops fail and rivers shrink.",
    ),
    (
        "Income tax",
        "Income tax is paid on wages and on profits. The tax rate rises with income. Net "
        "income was $ 5,363 in 2023.",
    ),
    (
        "",
        "A tax deduction lowers the income on which tax is paid. Gifts to charity are a "
        "common deduction.",
    ),
    (
        "Company profits",
        "The company reported higher profits this year. Revenue grew while costs stayed flat. "
        "Profits are taxed at the corporate rate.",
    ),
    (
        "Proteins",
        "A protein folds into a shape that decides its function. Misfolded proteins cause disease.",
    ),
    ("", "Enzymes are proteins that speed up chemical reactions in the cell."),
    (
        "Cell division",
        "A cell copies its DNA before it divides. Errors in the copy can cause disease. The "
        "new cells share the same proteins.",
    ),
)

_QUERIES: tuple[tuple[str, str, dict[str, int]], ...] = (
    ("q1", "how do solar panels store electricity at night", {"d01": 1, "d02": 2}),
    ("q2", "river flood damage to farms", {"d04": 2, "d05": 1}),
    ("q3", "how is income tax on profits paid", {"d07": 2, "d08": 1, "d09": 1}),
    ("q4", "what do proteins do in the cell", {"d10": 1, "d11": 2, "d12": 1}),
    ("q5", "wind power", {"d03": 1}),
)

_POOL_SIZE = 6


@functools.cache
def synthetic_task(*, pool: bool = False) -> RetrievalTask:
    """A tiny deterministic retrieval task, written out in code.

    Twelve documents of one to three sentences over four topics that share vocabulary
    (electricity, rivers, tax, proteins; one with a paragraph break, one with numbers), and
    five queries with graded judgements.

    Args:
        pool: give every query a pool of :data:`_POOL_SIZE` candidates (its relevant
            documents and the next ones in corpus order), as a reranking task does.

    """
    doc_ids = [f"d{i:02d}" for i in range(1, len(_DOCUMENTS) + 1)]
    pools = None
    if pool:
        pools = {}
        for qid, _, rel in _QUERIES:
            first = doc_ids.index(min(rel))
            pools[qid] = [doc_ids[(first + k) % len(doc_ids)] for k in range(_POOL_SIZE)]
    return RetrievalTask(
        name="synthetic-pool" if pool else "synthetic",
        doc_ids=doc_ids,
        doc_titles=[t for t, _ in _DOCUMENTS],
        doc_bodies=[b for _, b in _DOCUMENTS],
        query_ids=[q for q, _, _ in _QUERIES],
        query_texts=[t for _, t, _ in _QUERIES],
        qrels={q: dict(rel) for q, _, rel in _QUERIES},
        pools=pools,
        source="synthetic",
    )


# ---------------------------------------------------------------------------------------------
# The pre-check


def precheck_limits(limits: SandboxLimits) -> SandboxLimits:
    """``limits`` with the wall time cut to :data:`PRECHECK_WALL_SECONDS` (at most)."""
    return dataclasses.replace(
        limits, wall_seconds=min(limits.wall_seconds, PRECHECK_WALL_SECONDS), cpu_seconds=None
    )


def registered_structures(
    ledger: Ledger, base: Mapping[str, tuple[str, ...]]
) -> dict[str, tuple[str, ...]]:
    """``base`` and the structure of every evaluated program in ``ledger`` (as the loop has)."""
    out = dict(base)
    for record in ledger.records:
        if record.status != Status.OK:
            continue
        source = ledger.source(record)
        if source is not None:
            out[record.program_id] = structure(source)
    return out


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
            :class:`~embedding_ttc.search.interface.CandidateError` on a violation).
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
