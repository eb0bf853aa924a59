"""Prompt sections about one program's lineage: its results against its parent, its lessons.

Shared by the proposers that start from one parent program (the edit proposer and the guided
structural proposer); both read the state as the loop hands it over, the search part only.
"""

from __future__ import annotations

from embedding_ttc.runs.records import LedgerRecord
from embedding_ttc.search.lessons import lineage
from embedding_ttc.search.prompts.common import section
from embedding_ttc.search.state import SearchState

LESSONS = 8
"""Lessons shown at most."""


def results_section(state: SearchState, record: LedgerRecord) -> str:
    """``record``'s per-task Δ beside its parent's (the search part the proposer sees)."""
    mine = record.per_task_delta
    if not mine:
        return ""
    grand = next((r for r in state.history if r.program_id == record.parent_id), None)
    theirs = grand.per_task_delta if grand is not None else {}
    if grand is not None and theirs:
        rows = [f"| {t} | {d:+.4f} | {theirs[t]:+.4f} | {d - theirs[t]:+.4f} |"
                for t, d in mine.items() if t in theirs]  # fmt: skip
        header = f"| task | {record.program_id} Δ | {grand.program_id} Δ | change |"
        title = f"{record.program_id} task by task, against its parent {grand.program_id}"
        return section(title, "\n".join([header, "|---|---|---|---|", *rows]), spaced=False)
    rows = [f"| {t} | {d:+.4f} |" for t, d in mine.items()]
    body = "\n".join([f"| task | {record.program_id} Δ |", "|---|---|", *rows])
    return section(f"{record.program_id} task by task", body, spaced=False)


def lessons_section(state: SearchState, program_id: str) -> str:
    """The lessons of ``program_id``'s lineage (:func:`~embedding_ttc.search.lessons.lineage`).

    ``program_id`` may also name a seed (a library program the run started from): its
    lineage is then its children, what was already tried on it.
    """
    rows = lineage(state.history, program_id, LESSONS)
    if not rows:
        return ""
    body = "\n".join(f"- {r.lesson}" for r in rows)
    return section("Lessons of this program's lineage (newest first)", body, spaced=False)
