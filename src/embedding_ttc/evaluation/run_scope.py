"""One program's run on one task, across its calls: where a limit over the whole run is kept.

In shortlist mode the evaluator calls a program once per batch of queries
(:mod:`~embedding_ttc.evaluation.batches`). A limit that promises "this long per program per
task" (the sandbox's ``--timeout``) must then count every call of the run, not start afresh
at each. :func:`program_run` marks the run (the evaluator enters it around a program's calls
on a task); a program that keeps state over a run (its clock) finds the run's slots with
:func:`current_run`, keyed by itself. Outside a run (a deployed program answering one request)
there is none, and each call stands alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

RunSlots = dict[int, object]
"""A run's state, by the ``id`` of the program that keeps it."""

_CURRENT: ContextVar[RunSlots | None] = ContextVar("embedding_ttc_program_run", default=None)


@contextmanager
def program_run() -> Iterator[RunSlots]:
    """Within the block, the calls of a program belong to one run (per thread or task)."""
    slots: RunSlots = {}
    token = _CURRENT.set(slots)
    try:
        yield slots
    finally:
        _CURRENT.reset(token)


def current_run() -> RunSlots | None:
    """The slots of the run the current call belongs to, or ``None`` outside any."""
    return _CURRENT.get()
