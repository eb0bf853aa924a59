"""The frontier, derived from the ledger: two admission rules and the Pareto set.

Both rules walk the ledger in order and read one number per evaluated program, its mean Δ
against the **objective** (``p0``, or the run's ``reference`` program):

* **compute** (the paper's rule, §3.3): admitted when the mean Δ over all of each discovery
  task's queries is positive and exceeds that of every program admitted before it. It
  rewards whatever the discovery tasks reward, compute included.
* **transfer**: admitted when the mean Δ over the **validation** part of each task (queries
  the proposer never saw, :mod:`~embedding_ttc.runs.split`) is positive and exceeds that of
  every program admitted before it, *and* no task loses on its validation part
  (Δ < −0.001). It needs a run with a split.

The **Pareto set** is over (cost ratio ``c``, the rule's mean Δ): the evaluated programs that
no other evaluated program dominates (``c`` no higher and mean Δ no lower, one of them
strictly). P0 (c = 1, Δ = 0 against itself) is generation 0 of every run. Exact ties in both
coordinates keep the earlier program only.

Pure computation; rendering lives in :func:`render_frontier`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.evaluation.comparison import TIE_THRESHOLD
from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.records import LedgerRecord, Objective, Scope

Rule = Literal["compute", "transfer"]

RULES: Mapping[Rule, str] = {
    "compute": "mean Δ over all discovery queries beats every program admitted before it",
    "transfer": (
        "mean Δ over the validation queries beats every program admitted before it, "
        "and no task loses on its validation part"
    ),
}
"""The admission rules by name, each with what it admits."""

SCOPES: Mapping[Rule, Scope] = {"compute": "all", "transfer": "validation"}
"""The queries each rule reads."""


class FrontierError(EmbeddingTTCError):
    """A rule or objective the ledger has no numbers for (the message says which)."""


@dataclass(frozen=True)
class Frontier:
    """The admitted sequence and the Pareto set of a ledger, under one rule and objective."""

    admitted: tuple[LedgerRecord, ...]
    pareto: tuple[LedgerRecord, ...]
    rule: Rule = "compute"
    objective: Objective = "p0"

    @property
    def scope(self) -> Scope:
        """The queries the rule reads."""
        return SCOPES[self.rule]

    def score(self, record: LedgerRecord) -> float:
        """``record``'s mean Δ as the rule reads it."""
        return score(record, self.rule, self.objective)

    @property
    def best(self) -> LedgerRecord | None:
        """The admitted program with the highest mean Δ (the last admitted)."""
        return self.admitted[-1] if self.admitted else None

    def top(self, k: int) -> tuple[LedgerRecord, ...]:
        """The ``k`` best Pareto programs by mean Δ (ties: cheaper first), best first."""
        ranked = sorted(self.pareto, key=lambda r: (-self.score(r), r.cost_ratio or 0.0))
        return tuple(ranked[:k])


def score(record: LedgerRecord, rule: Rule = "compute", objective: Objective = "p0") -> float:
    """The mean Δ ``rule`` reads of an evaluated ``record``, against ``objective``.

    Raises:
        FrontierError: the record has no such numbers (a run without a split, or without a
            reference).

    """
    if rule == "compute" and objective == "p0" and record.mean_delta is not None:
        return float(record.mean_delta)
    mean = record.mean(objective, SCOPES[rule])
    if mean is None:
        raise FrontierError(_missing(record, rule, objective))
    return mean


def _missing(record: LedgerRecord, rule: Rule, objective: Objective) -> str:
    needs = []
    if rule == "transfer":
        needs.append("a validation split (search with --validation-share)")
    if objective == "reference":
        needs.append("a reference program (search with --reference)")
    return (
        f"{record.program_id} has no numbers for the {rule} rule against {objective}: "
        f"the run was made without {' and '.join(needs)}"
    )


def evaluated(records: Sequence[LedgerRecord]) -> list[LedgerRecord]:
    """The records with a measurement (status ``ok``, a mean Δ and a cost ratio), in order."""
    return [
        r
        for r in records
        if r.status == Status.OK and r.mean_delta is not None and r.cost_ratio is not None
    ]


def _no_validation_loss(record: LedgerRecord, objective: Objective) -> bool:
    deltas = record.deltas(objective, "validation")
    if deltas is None:
        raise FrontierError(_missing(record, "transfer", objective))
    return all(d >= -TIE_THRESHOLD for d in deltas.values())


def admitted(
    records: Sequence[LedgerRecord], rule: Rule = "compute", objective: Objective = "p0"
) -> tuple[LedgerRecord, ...]:
    """The programs ``rule`` admits, in ledger order (see the module docstring).

    Raises:
        FrontierError: an unknown rule, or a ledger without the numbers the rule reads.

    """
    if rule not in RULES:
        raise FrontierError(f"unknown admission rule {rule!r}; choose from {', '.join(RULES)}")
    out: list[LedgerRecord] = []
    bar = 0.0
    for record in evaluated(records):
        mean = score(record, rule, objective)
        if mean > bar and (rule != "transfer" or _no_validation_loss(record, objective)):
            out.append(record)
            bar = mean
    return tuple(out)


def pareto(
    records: Sequence[LedgerRecord], rule: Rule = "compute", objective: Objective = "p0"
) -> tuple[LedgerRecord, ...]:
    """The non-dominated evaluated programs over (cost ratio, the rule's mean Δ), cheapest first."""
    points = [
        (r, float(r.cost_ratio or 0.0), score(r, rule, objective)) for r in evaluated(records)
    ]
    keep: list[tuple[LedgerRecord, float, float]] = []
    for i, (r, c, m) in enumerate(points):
        dominated = any(
            oc <= c and om >= m and (oc < c or om > m or j < i)
            for j, (_, oc, om) in enumerate(points)
            if j != i
        )
        if not dominated:
            keep.append((r, c, m))
    return tuple(r for r, _, _ in sorted(keep, key=lambda p: (p[1], -p[2])))


def frontier(
    records: Sequence[LedgerRecord], rule: Rule = "compute", objective: Objective = "p0"
) -> Frontier:
    """Both views of the frontier of a ledger under ``rule`` and ``objective``."""
    return Frontier(
        admitted=admitted(records, rule, objective),
        pareto=pareto(records, rule, objective),
        rule=rule,
        objective=objective,
    )


def frontier_json(front: Frontier) -> dict[str, object]:
    """A JSON-ready description of a frontier."""

    def row(r: LedgerRecord) -> dict[str, object]:
        return {
            "program_id": r.program_id,
            "generation": r.generation,
            "cost_ratio": r.cost_ratio,
            "query_time_cost_ratio": r.query_time_cost_ratio,
            "mean_delta": r.mean_delta,
            "score": front.score(r),
            "worst_query_delta": r.worst_query(front.objective, front.scope),
            **(r.wtl.model_dump() if r.wtl is not None else {}),  # every evaluated record's
            "novelty": r.novelty,
        }

    return {
        "rule": front.rule,
        "objective": front.objective,
        "scope": front.scope,
        "admitted": [row(r) for r in front.admitted],
        "pareto": [row(r) for r in front.pareto],
    }


def render_frontier(front: Frontier, n_records: int) -> str:
    """A plain-text report of both views (for the terminal).

    ``mean Δ`` and ``worst q`` are the rule's: over its queries (all, or the validation part),
    against its objective; ``W/T/L`` counts tasks over all queries against P0.
    """
    lines = [
        f"{n_records} programs in the ledger; rule {front.rule} ({RULES[front.rule]}), "
        f"Δ against {front.objective} over {front.scope} queries"
    ]
    none = f"(none: no program beat {'P0' if front.objective == 'p0' else 'the reference'})"
    for title, rows in (("Admitted", front.admitted), ("Pareto (cost vs mean Δ)", front.pareto)):
        lines.append(f"\n{title}:")
        lines.append(
            f"  {'program':<16} {'gen':>4} {'c':>6} {'c_q':>6} {'mean Δ':>9} {'worst q':>8}  W/T/L"
        )
        if not rows:
            lines.append(f"  {none}" if title == "Admitted" else "  (none)")
        for r in rows:
            worst = r.worst_query(front.objective, front.scope)
            c_q = r.query_time_cost_ratio
            lines.append(
                f"  {r.program_id:<16} {r.generation:>4} {r.cost_ratio or 0.0:>6.2f} "
                f"{'-' if c_q is None else f'{c_q:.2f}':>6} {front.score(r):>+9.4f} "
                f"{'-' if worst is None else f'{worst:+.3f}':>8}  {r.wtl}"
            )
    return "\n".join(lines)
