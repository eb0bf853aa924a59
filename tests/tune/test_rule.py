"""The tune pick rule on hand-built candidates: signal, relative tail, served time, fall-back."""

from __future__ import annotations

import pytest

from embedding_ttc.tune.rule import Scored, TuneRule, TuneRuleError, judge, register_rule

P0 = Scored("P0", [0.9, 0.8, 0.2, 0.5], served_seconds=0.010)
FUSION = Scored("fusion", [0.7, 0.8, 0.4, 0.5], served_seconds=0.011)  # mean 0.6, 0 deep losses


def test_the_best_eligible_candidate_is_the_pick():
    better = Scored("better", [0.8, 0.8, 0.4, 0.6], 0.012)  # mean 0.65: +0.05
    best = Scored("best", [0.9, 0.8, 0.5, 0.6], 0.012)  # mean 0.70: +0.10
    verdicts, pick = judge(TuneRule(), P0, FUSION, [better, best])
    assert [v.eligible for v in verdicts] == [True, True]
    assert pick.name == "best"
    assert pick.signal == pytest.approx(0.10)
    assert pick.slowdown == pytest.approx(1.2)


def test_a_signal_within_the_margin_is_no_win():
    tie = Scored("tie", [0.7, 0.8, 0.4, 0.5 + 0.003], 0.010)  # +0.00075 over the fusion
    verdicts, pick = judge(TuneRule(), P0, FUSION, [tie])
    assert not verdicts[0].eligible
    assert "not above 0.001" in verdicts[0].why_not
    assert pick.name == "fusion" and pick.signal == 0.0


def test_deep_losses_are_counted_against_p0_relative_to_the_fusion():
    # +0.125 over the fusion on the mean, but one query 0.6 below P0 where the fusion has none
    risky = Scored("risky", [0.3, 1.0, 1.0, 0.6], 0.010)
    verdicts, pick = judge(TuneRule(), P0, FUSION, [risky])
    assert verdicts[0].deep_losses == 1
    assert verdicts[0].why_not == "1 deep losses against P0, the tuned fusion has 0"
    assert pick.name == "fusion"
    # without the tail condition it would win
    _, pick = judge(TuneRule(relative_tail=False), P0, FUSION, [risky])
    assert pick.name == "risky"


def test_the_served_time_bar_is_against_p0():
    slow = Scored("slow", [0.9, 0.9, 0.5, 0.6], served_seconds=0.0131)  # 1.31 x P0
    verdicts, pick = judge(TuneRule(), P0, FUSION, [slow])
    assert verdicts[0].slowdown == pytest.approx(1.31)
    assert "1.31 times P0's time, above 1.3" in verdicts[0].why_not
    assert pick.name == "fusion"
    _, pick = judge(TuneRule(max_slowdown=1.5), P0, FUSION, [slow])
    assert pick.name == "slow"


def test_equal_signals_keep_the_first_candidate():
    a = Scored("a", [0.8, 0.8, 0.4, 0.6], 0.010)
    b = Scored("b", [0.8, 0.8, 0.4, 0.6], 0.010)
    assert judge(TuneRule(), P0, FUSION, [a, b])[1].name == "a"


def test_candidates_scored_on_other_queries_are_refused():
    with pytest.raises(TuneRuleError, match="scored on 3 validation queries, P0 on 4"):
        judge(TuneRule(), P0, FUSION, [Scored("short", [0.1, 0.2, 0.3], 0.01)])


def test_a_registered_rule_never_changes(tmp_path):
    digest = register_rule(tmp_path, TuneRule())
    assert register_rule(tmp_path, TuneRule()) == digest
    with pytest.raises(TuneRuleError, match="registers another rule than asked"):
        register_rule(tmp_path, TuneRule(max_slowdown=2.0))
    (tmp_path / "pick-rule.json").write_text("{", encoding="utf-8")
    with pytest.raises(TuneRuleError, match="is not a tune pick rule"):
        register_rule(tmp_path, TuneRule())
