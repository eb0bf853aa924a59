"""W/T/L and the comparison record: the tie rule, compare(), and the counted comparison."""

import pytest
from pydantic import BaseModel, ValidationError

from embedding_ttc.evaluation.comparison import (
    TIE_THRESHOLD,
    WTL,
    Comparison,
    CountedComparison,
    compare,
)


class Scores:
    def __init__(self, per_query):
        self.per_query = per_query
        self.ndcg_at_10 = sum(per_query.values()) / len(per_query)


def test_a_tie_is_within_the_threshold_inclusive():
    assert TIE_THRESHOLD == 0.001
    counted = WTL.count([0.0011, 0.001, -0.001, -0.0011, 0.0])
    assert counted == WTL(wins=1, ties=3, losses=1)
    assert counted.total == 5
    assert str(WTL(wins=13, ties=1, losses=0)) == "13/1/0"
    assert WTL.count([0.05, 0.02], threshold=0.03) == WTL(wins=1, ties=1, losses=0)
    assert WTL.count([]) == WTL(wins=0, ties=0, losses=0)


def test_counts_are_non_negative_and_fields_fixed():
    with pytest.raises(ValidationError):
        WTL(wins=-1, ties=0, losses=0)
    with pytest.raises(ValidationError):
        WTL.model_validate({"wins": 1, "ties": 0, "losses": 0, "draws": 1})


def test_compare_fills_both_ndcgs_the_mean_delta_and_per_query_counts():
    program = Scores({"q1": 0.7, "q2": 0.2005, "q3": 0.9, "q4": 0.1})
    baseline = Scores({"q1": 0.5, "q2": 0.2, "q3": 1.0, "q4": 0.0})
    cmp = compare(program, baseline)
    assert cmp.ndcg_at_10 == program.ndcg_at_10
    assert cmp.baseline_ndcg_at_10 == baseline.ndcg_at_10
    # Δ = mean(0.2, 0.0005, -0.1, 0.1) = 0.050125; 0.0005 is a tie at ±0.001.
    assert cmp.delta_ndcg_at_10 == pytest.approx(0.050125)
    assert cmp.wtl == WTL(wins=2, ties=1, losses=1)
    with pytest.raises(ValueError, match="different queries"):
        compare(program, Scores({"q1": 0.5}))


class Holder(BaseModel):
    comparison: CountedComparison


def test_a_counted_comparison_refuses_one_without_wtl():
    known = Comparison(ndcg_at_10=0.6, baseline_ndcg_at_10=0.5, delta_ndcg_at_10=0.1, wtl=None)
    with pytest.raises(ValidationError, match="per-query W/T/L"):
        Holder(comparison=known)
    counted = known.model_copy(update={"wtl": WTL(wins=1, ties=0, losses=0)})
    assert Holder(comparison=counted).comparison is counted
