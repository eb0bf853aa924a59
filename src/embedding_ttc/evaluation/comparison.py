"""A program against the baseline: the W/T/L count and the comparison record, written once.

Every W/T/L in the package is a :class:`WTL` counted by :meth:`WTL.count`: over the queries
of one task (:func:`compare`), over the tasks of a suite (the discovery table, the search's
ledger), over the cells of the transfer matrix. Records that report a comparison embed
:class:`Comparison` rather than copying its fields.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Annotated, Protocol

from pydantic import AfterValidator, BaseModel, ConfigDict, NonNegativeInt

# The rule of a tie, as in the paper's W/T/L: a difference Δ (program − baseline) is a win
# when Δ > 0.001, a loss when Δ < −0.001, and a tie when |Δ| <= 0.001. The margin keeps
# floating-point noise and negligible changes of one query's nDCG@10 out of the count.
TIE_THRESHOLD = 0.001

DEEP_LOSS = 0.5
"""A query whose Δ is below minus this is a **deep loss**: more than half of the nDCG@10 scale
lost on it (a query with one relevant document falling out of the top ten loses 1.0), a result
list a user would call broken; counted apart from the mean."""


def count_deep_losses(deltas: Iterable[float]) -> int:
    """How many of the per-query ``deltas`` are deep losses (below ``-DEEP_LOSS``)."""
    return sum(d < -DEEP_LOSS for d in deltas)


class WTL(BaseModel):
    """Wins, ties and losses of a set of differences at ±threshold (see :meth:`count`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    wins: NonNegativeInt
    ties: NonNegativeInt
    losses: NonNegativeInt

    @classmethod
    def count(cls, deltas: Iterable[float], threshold: float = TIE_THRESHOLD) -> WTL:
        """Count ``deltas`` above ``threshold`` (wins), below ``-threshold`` and in between."""
        values = list(deltas)
        wins = sum(1 for d in values if d > threshold)
        losses = sum(1 for d in values if d < -threshold)
        return cls(wins=wins, ties=len(values) - wins - losses, losses=losses)

    @property
    def total(self) -> int:
        """How many differences were counted."""
        return self.wins + self.ties + self.losses

    def __str__(self) -> str:
        return f"{self.wins}/{self.ties}/{self.losses}"


class Comparison(BaseModel):
    """A program against the baseline on one task: both nDCG@10, the mean Δ, per-query W/T/L.

    ``delta_ndcg_at_10`` is the mean over queries of the per-query difference (the paper's
    footnote), and ``wtl`` counts those differences at ±:data:`TIE_THRESHOLD`. ``wtl`` is
    ``None`` only in the ledger lines of the first search run (``results/search``), which
    recorded each task's Δ without its per-query counts; every comparison computed by
    :func:`compare` has it, and the records that require it (the summary row, the transfer
    cell) refuse one without.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    ndcg_at_10: float
    baseline_ndcg_at_10: float
    delta_ndcg_at_10: float
    wtl: WTL | None


def _require_wtl(comparison: Comparison) -> Comparison:
    if comparison.wtl is None:
        raise ValueError("the comparison needs its per-query W/T/L (wtl)")
    return comparison


CountedComparison = Annotated[Comparison, AfterValidator(_require_wtl)]
"""A :class:`Comparison` field whose validation refuses one without its per-query W/T/L."""


class Scored(Protocol):
    """What :func:`compare` reads of a result (a ``TaskResult`` has both)."""

    @property
    def ndcg_at_10(self) -> float:
        """The mean of ``per_query``."""
        ...

    @property
    def per_query(self) -> Mapping[str, float]:
        """nDCG@10 of every query id."""
        ...


def query_deltas(
    result: Scored, baseline: Scored, queries: Collection[str] | None = None
) -> dict[str, float]:
    """Each query's nDCG@10 difference (program − baseline), over ``queries`` (``None``: all).

    Raises:
        ValueError: the two results cover different queries, or ``queries`` names one that
            neither covers.

    """
    if result.per_query.keys() != baseline.per_query.keys():
        raise ValueError("results cover different queries; compare runs of the same task")
    ids = list(baseline.per_query) if queries is None else list(queries)
    unknown = [q for q in ids if q not in baseline.per_query]
    if unknown:
        raise ValueError(f"{len(unknown)} queries are not in the results (first {unknown[0]!r})")
    return {q: result.per_query[q] - baseline.per_query[q] for q in ids}


def compare(result: Scored, baseline: Scored, queries: Collection[str] | None = None) -> Comparison:
    """ΔnDCG@10 = mean over queries of (program − baseline); W/T/L at ±0.001 per query.

    ``queries`` restricts the comparison to a subset (a part of a validation split): both
    nDCG@10 are then the means over that subset.
    """
    deltas = query_deltas(result, baseline, queries)
    return comparison_of(result, baseline, deltas, subset=queries is not None)


def comparison_of(
    result: Scored, baseline: Scored, deltas: Mapping[str, float], *, subset: bool
) -> Comparison:
    """The comparison of :func:`compare` from the ``deltas`` of :func:`query_deltas`.

    For a caller that also reads the per-query differences (the search's worst query), so
    they are computed once. ``subset``: ``deltas`` covers a part of the queries, whose means
    both nDCG@10 are; otherwise they are the results' own.
    """
    if subset:
        n = max(len(deltas), 1)
        ndcg = sum(result.per_query[q] for q in deltas) / n
        base = sum(baseline.per_query[q] for q in deltas) / n
    else:
        ndcg, base = result.ndcg_at_10, baseline.ndcg_at_10
    values = list(deltas.values())
    return Comparison(
        ndcg_at_10=ndcg,
        baseline_ndcg_at_10=base,
        delta_ndcg_at_10=sum(values) / len(values) if values else 0.0,
        wtl=WTL.count(values),
    )
