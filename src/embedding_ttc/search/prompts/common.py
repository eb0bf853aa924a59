"""What the full and the compact prompts share: sections, code fences, notes, constraints."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from embedding_ttc.program_files.contract import CONSTRAINTS
from embedding_ttc.runs.records import LedgerRecord
from embedding_ttc.search.state import SearchState

TokenCounter = Callable[[str], int]
"""A tokenizer's count of a text's tokens (or an estimate)."""


def section(title: str, body: str, *, spaced: bool = True) -> str:
    """A ``## title`` section; ``spaced`` leaves a blank line between title and body."""
    return f"## {title}{chr(10) * 2 if spaced else chr(10)}{body.rstrip()}"


def fenced(text: str, lang: str = "python") -> str:
    """Fence ``text`` with more backticks than any run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"


def clip(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters with a final ``…``."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def task_list(state: SearchState) -> str:
    """The discovery tasks' names, comma-separated (``(none)`` when there are none)."""
    return ", ".join(state.tasks) if state.tasks else "(none)"


FROZEN_ENCODER = (
    "A frozen text encoder embedded the queries and documents of several retrieval tasks; "
)
"""How every short prompt begins to state the problem (the full prompt states it at length)."""


def task_introduction(state: SearchState, heading: str, problem: str) -> str:
    """A short prompt's first section: its heading, the problem, what to do, and the tasks.

    Args:
        state: the search state (for the tasks' names).
        heading: the section's heading (what the model is asked for).
        problem: the rest of the problem's statement after :data:`FROZEN_ENCODER`.

    """
    return f"# {heading}\n{FROZEN_ENCODER}{problem}\nTasks: {task_list(state)}."


def numbered_constraints(statements: Mapping[str, str] | None = None) -> str:
    """The six constraints, numbered, one a line; ``statements`` rewords them by name."""
    return "\n".join(
        f"{i}. {name}: {statements[name] if statements is not None else statement}"
        for i, (name, statement) in enumerate(CONSTRAINTS, start=1)
    )


def status_counts(history: Sequence[LedgerRecord]) -> dict[str, int]:
    """How many records have each status, in order of first appearance."""
    counts: dict[str, int] = {}
    for record in history:
        counts[record.status.value] = counts.get(record.status.value, 0) + 1
    return counts


def is_p0(record: LedgerRecord) -> bool:
    """Whether ``record`` is generation 0, the baseline P0."""
    return record.generation == 0
