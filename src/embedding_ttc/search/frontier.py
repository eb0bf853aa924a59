"""The frontier, derived from the ledger: the paper's admission rule and the Pareto set.

* **Admission** (paper §3.3): walking the ledger in order, an evaluated program is admitted
  when its mean ΔnDCG@10 over the discovery tasks is positive and exceeds the mean Δ of every
  program admitted before it. The admitted sequence is the search's record of improvement.
* **Pareto set** over (cost ratio ``c``, mean Δ): the evaluated programs that no other
  evaluated program dominates (``c`` no higher and mean Δ no lower, one of them strictly).
  P0 (c = 1, Δ = 0) is generation 0 of every run, so the set always has its cheap end.
  Exact ties in both coordinates keep the earlier program only.

Pure computation; rendering lives in :func:`render_frontier`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from embedding_ttc.evaluation.outcome import Status
from embedding_ttc.search.records import LedgerRecord


@dataclass(frozen=True)
class Frontier:
    """The admitted sequence and the Pareto set of a ledger."""

    admitted: tuple[LedgerRecord, ...]
    pareto: tuple[LedgerRecord, ...]

    @property
    def best(self) -> LedgerRecord | None:
        """The admitted program with the highest mean Δ (the last admitted)."""
        return self.admitted[-1] if self.admitted else None

    def top(self, k: int) -> tuple[LedgerRecord, ...]:
        """The ``k`` best Pareto programs by mean Δ (ties: cheaper first), best first."""
        ranked = sorted(self.pareto, key=lambda r: (-(r.mean_delta or 0.0), r.cost_ratio or 0.0))
        return tuple(ranked[:k])


def _evaluated(records: Sequence[LedgerRecord]) -> list[LedgerRecord]:
    return [
        r
        for r in records
        if r.status == Status.OK and r.mean_delta is not None and r.cost_ratio is not None
    ]


def admitted(records: Sequence[LedgerRecord]) -> tuple[LedgerRecord, ...]:
    """The programs admitted by the paper's rule, in ledger order."""
    out: list[LedgerRecord] = []
    bar = 0.0
    for record in _evaluated(records):
        mean = float(record.mean_delta or 0.0)
        if mean > bar:
            out.append(record)
            bar = mean
    return tuple(out)


def pareto(records: Sequence[LedgerRecord]) -> tuple[LedgerRecord, ...]:
    """The non-dominated evaluated programs over (cost ratio, mean Δ), cheapest first."""
    points = _evaluated(records)
    keep: list[LedgerRecord] = []
    for i, r in enumerate(points):
        c, m = float(r.cost_ratio or 0.0), float(r.mean_delta or 0.0)
        dominated = False
        for j, o in enumerate(points):
            oc, om = float(o.cost_ratio or 0.0), float(o.mean_delta or 0.0)
            if i == j:
                continue
            if oc <= c and om >= m and (oc < c or om > m or j < i):
                dominated = True
                break
        if not dominated:
            keep.append(r)
    return tuple(sorted(keep, key=lambda r: (r.cost_ratio or 0.0, -(r.mean_delta or 0.0))))


def frontier(records: Sequence[LedgerRecord]) -> Frontier:
    """Both views of the frontier of a ledger."""
    return Frontier(admitted=admitted(records), pareto=pareto(records))


def frontier_json(front: Frontier) -> dict[str, object]:
    """A JSON-ready description of a frontier."""

    def row(r: LedgerRecord) -> dict[str, object]:
        return {
            "program_id": r.program_id,
            "generation": r.generation,
            "cost_ratio": r.cost_ratio,
            "mean_delta": r.mean_delta,
            **(r.wtl.model_dump() if r.wtl is not None else {}),  # every evaluated record's
            "novelty": r.novelty,
        }

    return {
        "admitted": [row(r) for r in front.admitted],
        "pareto": [row(r) for r in front.pareto],
    }


def render_frontier(front: Frontier, n_records: int) -> str:
    """A plain-text report of both views (for the terminal)."""
    lines = [f"{n_records} programs in the ledger"]
    for title, rows in (("Admitted", front.admitted), ("Pareto (cost vs mean Δ)", front.pareto)):
        lines.append(f"\n{title}:")
        lines.append(f"  {'program':<16} {'gen':>4} {'c':>6} {'mean Δ':>9}  W/T/L")
        if not rows:
            lines.append("  (none: no program beat P0)" if title == "Admitted" else "  (none)")
        for r in rows:
            lines.append(
                f"  {r.program_id:<16} {r.generation:>4} {r.cost_ratio or 0.0:>6.2f} "
                f"{r.mean_delta or 0.0:>+9.4f}  {r.wtl}"
            )
    return "\n".join(lines)
