"""The lesson of a generation: what a program changed, what moved, and what was expected.

A ledger row's scores say how good a program is; its lesson says what its generation taught,
in one line a later proposer can read (the paper's history rows carry "a lesson, not just
scores"). :func:`lesson` writes it from the record and its parent's record *as a proposer sees
them* (:meth:`~embedding_ttc.runs.records.LedgerRecord.seen_by_proposer`: the search part of
the split against the run's objective), so a lesson never carries a validation number:

* evaluated: the change claimed (novelty), the mean Δ against the parent and against the
  baseline, the tasks that moved most against the parent (up and down), and the hypothesis
  that was tested;
* not evaluated: the status and the first line of the reason (what not to write again).

:func:`lineage` picks the lessons a proposer is shown for a parent: its ancestors' and its
other children's, newest first.
"""

from __future__ import annotations

from collections.abc import Sequence

from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.records import LedgerRecord, Objective

MOVED_TASKS = 3
"""Tasks named per direction in a lesson (the largest moves against the parent)."""

MOVE_EPSILON = 0.001
"""A task whose Δ changes by less than this did not move (the W/T/L tie band)."""

REASON_CHARS = 160
"""Longest failure reason kept in a lesson."""

CLAIM_CHARS = 200
"""Longest novelty or hypothesis kept in a lesson."""


def lesson(record: LedgerRecord, parent: LedgerRecord | None, objective: Objective = "p0") -> str:
    """One line on what ``record``'s generation taught (see the module docstring).

    Args:
        record: the new record, as the proposer sees it (search part, ``objective``).
        parent: its parent's record in the same view, or ``None`` (no parent or unknown).
        objective: the baseline the Δ are taken against, for the wording.

    """
    base = "P0" if objective == "p0" else "the reference"
    origin = f" from {parent.program_id}" if parent is not None else ""
    change = _clip(record.novelty or "no change stated", CLAIM_CHARS)
    if record.status is not Status.OK:
        reason = _clip(
            record.reason.strip().splitlines()[0] if record.reason.strip() else "", REASON_CHARS
        )
        return f"{record.program_id}{origin} tried: {change}; {record.status.value}: {reason}"
    mean = record.mean_delta if record.mean_delta is not None else 0.0
    parts = [f"{record.program_id}{origin}: {change}"]
    if parent is not None and parent.status is Status.OK and parent.mean_delta is not None:
        parts.append(f"mean Δ {mean - parent.mean_delta:+.4f} vs parent ({mean:+.4f} vs {base})")
        parts.append(_moves(record, parent))
    else:
        parts.append(f"mean Δ {mean:+.4f} vs {base}")
    if record.hypothesis:
        parts.append(f"expected: {_clip(record.hypothesis, CLAIM_CHARS)}")
    return "; ".join(p for p in parts if p)


def lineage(
    history: Sequence[LedgerRecord], parent_id: str | None, limit: int = 8
) -> list[LedgerRecord]:
    """The records whose lessons a proposer editing ``parent_id`` reads, newest first.

    The parent's ancestors (its own lesson, its parent's, ...) and the parent's other
    children (what was already tried on it), at most ``limit``; records without a lesson are
    skipped.
    """
    by_id = {r.program_id: r for r in history}
    chosen: dict[str, LedgerRecord] = {}
    node = by_id.get(parent_id) if parent_id is not None else None
    seen: set[str] = set()
    while node is not None and node.program_id not in seen:
        seen.add(node.program_id)
        chosen[node.program_id] = node
        node = by_id.get(node.parent_id) if node.parent_id is not None else None
    if parent_id is not None:
        for r in history:
            if r.parent_id == parent_id:
                chosen[r.program_id] = r
    ordered = sorted(chosen.values(), key=lambda r: r.generation, reverse=True)
    return [r for r in ordered if r.lesson][:limit]


def _moves(record: LedgerRecord, parent: LedgerRecord) -> str:
    mine, theirs = record.per_task_delta, parent.per_task_delta
    change = {t: mine[t] - theirs[t] for t in mine if t in theirs}
    up = sorted((t for t, d in change.items() if d >= MOVE_EPSILON), key=lambda t: -change[t])
    down = sorted((t for t, d in change.items() if d <= -MOVE_EPSILON), key=lambda t: change[t])
    flat = len(change) - len(up) - len(down)
    out = []
    if up:
        out.append("up " + ", ".join(f"{t} {change[t]:+.3f}" for t in up[:MOVED_TASKS]))
    if down:
        out.append("down " + ", ".join(f"{t} {change[t]:+.3f}" for t in down[:MOVED_TASKS]))
    if flat:
        out.append(f"{flat} unmoved")
    return ", ".join(out)


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
