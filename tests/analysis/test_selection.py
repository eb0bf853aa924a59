"""Selection signals and their cross-task agreement, on matrices worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from embedding_ttc.analysis.selection import (
    TaskDeltas,
    agreement,
    mean_over_tasks,
    median_over_tasks,
    task_cuts,
    task_deltas,
    tasks_won,
    trimmed_mean_over_tasks,
    worst_task,
)
from ledger_records import evaluated

D = np.array(
    [
        [0.10, 0.00, -0.20, 0.30],
        [0.05, 0.05, 0.05, 0.05],
        [-0.50, 0.40, 0.40, 0.40],
    ]
)


def test_aggregates_by_hand() -> None:
    np.testing.assert_allclose(mean_over_tasks(D), [0.05, 0.05, 0.175])
    np.testing.assert_allclose(median_over_tasks(D), [0.05, 0.05, 0.40])
    # Without the best and the worst task: (0.0 + 0.1) / 2, 0.05, (0.4 + 0.4) / 2.
    np.testing.assert_allclose(trimmed_mean_over_tasks(D), [0.05, 0.05, 0.40])
    np.testing.assert_allclose(tasks_won(D), [1.0, 4.0, 2.0])
    np.testing.assert_allclose(worst_task(D), [-0.20, 0.05, -0.50])


def test_the_cuts_are_every_partition_when_few_and_seeded_when_many() -> None:
    cuts = task_cuts(4, 2, cuts=100, seed=0)
    assert len(cuts) == 6
    assert all(len(seen) == 2 and len(aside) == 2 for seen, aside in cuts)
    assert {tuple(a) for _, a in cuts} == {(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)}
    many = task_cuts(10, 5, cuts=20, seed=3)
    assert len({tuple(a) for _, a in many}) == 20
    assert [tuple(a) for _, a in many] == [tuple(a) for _, a in task_cuts(10, 5, 20, 3)]
    with pytest.raises(ValueError, match="hold aside"):
        task_cuts(4, 4, 10, 0)


def test_a_signal_that_holds_across_tasks_agrees_fully() -> None:
    # Each program is as good on every task: any ordering signal on any tasks orders them right.
    rows = np.array([[0.1] * 4, [0.2] * 4, [0.3] * 4])
    steady = TaskDeltas(("a", "b", "c"), ("t1", "t2", "t3", "t4"), rows)
    ordering = {"mean": mean_over_tasks, "median": median_over_tasks, "worst": worst_task}
    for result in agreement(steady, held_aside=2, signals=ordering):
        assert result.mean_spearman == pytest.approx(1.0)
        assert result.mean_regret == 0.0
    # Every program wins every task: tasks won is constant, orders nothing, and ρ counts 0.
    (won,) = agreement(steady, held_aside=2, signals={"won": tasks_won})
    assert won.mean_spearman == 0.0


def test_regret_is_what_the_pick_loses_on_the_held_aside_tasks() -> None:
    # Program a wins task 1 hugely and loses the others; b is steady at 0.1.
    rows = np.array([[0.9, -0.1, -0.1], [0.1, 0.1, 0.1]])
    table = TaskDeltas(("a", "b"), ("t1", "t2", "t3"), rows)
    (mean,) = agreement(table, held_aside=1, signals={"mean": mean_over_tasks})
    # t1 aside: the mean of t2, t3 picks b (0.1 > -0.1), which scores 0.1 on t1 against a's
    # 0.9: regret 0.8. t2 aside: t1, t3 give a 0.4 and b 0.1, so a is picked, and on t2 it
    # scores -0.1 against b's 0.1: regret 0.2. t3 aside: the same, 0.2.
    assert mean.regret == pytest.approx((0.8, 0.2, 0.2))
    # Tasks won (b: 2 of 2, a: at most 1 - 1) picks b on every cut: regret 0.8, 0, 0.
    (won,) = agreement(table, held_aside=1, signals={"won": tasks_won})
    assert won.regret == pytest.approx((0.8, 0.0, 0.0))


def test_task_deltas_reads_a_ledger() -> None:
    records = [
        evaluated(1, "g0001", {"t1": 0.1, "t2": -0.2}),
        evaluated(2, "g0002", {"t1": 0.3, "t2": 0.0}),
    ]
    table = task_deltas(records, "p0", "all")
    assert table.tasks == ("t1", "t2")
    np.testing.assert_allclose(table.deltas, [[0.1, -0.2], [0.3, 0.0]])


def test_the_selection_command_prints_each_signal(tmp_path, capsys) -> None:
    from embedding_ttc.cli import main
    from embedding_ttc.runs.ledger import Ledger
    from ledger_records import split_evaluated

    ledger = Ledger(tmp_path)
    # Program i is better on every task the larger i: every signal orders them the same.
    for i in range(5):
        deltas = {t: i * 0.01 * (k + 1) for k, t in enumerate("abcde")}
        ledger.append(split_evaluated(i, f"g{i:04d}", deltas, deltas))
    assert main(["selection", str(tmp_path), "--held-aside", "2"]) == 0
    out = capsys.readouterr().out
    assert "5 programs, 5 tasks; 10 cuts holding 2 tasks aside" in out
    assert "| trimmed-mean | 1.00 | 0.000 |" in out
    assert main(["selection", str(tmp_path), "--held-aside", "5"]) != 0
    assert "hold aside between 1 and 4 tasks" in capsys.readouterr().err
