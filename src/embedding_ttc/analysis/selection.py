"""Which selection signal predicts transfer, measured on discovery tasks alone.

A search ranks its programs by a signal computed over tasks; a signal is worth using when the
order it gives on some tasks holds on tasks it did not see. This module measures that with the
discovery tasks of a run only: the run's tasks are cut many times into a *seen* part and a
*held-aside* part; each signal is computed on the seen part, and compared with the programs'
standing on the held-aside part. No held-out (transfer) task enters: the analysis can justify
a selection rule before any held-out cell exists.

Per cut, two numbers per signal:

* **Spearman's ρ** between the signal on the seen tasks and the target on the held-aside
  tasks, over the programs;
* **regret of the pick**: the target of the best program by the target, minus the target of
  the program the signal ranks first (0 when the signal picks the best; ties by ledger order).

The target aggregate is the median of per-task Δ over the held-aside tasks, so a task with
1,000 queries weighs what a task with 40 does. Everything here is pure computation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from math import comb

import numpy as np
from numpy.typing import NDArray
from scipy.stats import spearmanr

from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.records import LedgerRecord, Objective, Scope

Aggregate = Callable[[NDArray[np.float64]], NDArray[np.float64]]
"""Per-task Δ of each program (rows) over some tasks (columns) -> one number per program."""


def mean_over_tasks(deltas: NDArray[np.float64]) -> NDArray[np.float64]:
    """The mean of each program's per-task Δ (the search's rule so far)."""
    return np.asarray(deltas.mean(axis=1), dtype=np.float64)


def median_over_tasks(deltas: NDArray[np.float64]) -> NDArray[np.float64]:
    """The median of each program's per-task Δ."""
    return np.asarray(np.median(deltas, axis=1), dtype=np.float64)


def trimmed_mean_over_tasks(deltas: NDArray[np.float64]) -> NDArray[np.float64]:
    """The mean of each program's per-task Δ without its best and its worst task.

    With fewer than three tasks nothing is trimmed.
    """
    if deltas.shape[1] < 3:
        return np.asarray(deltas.mean(axis=1), dtype=np.float64)
    ordered = np.sort(deltas, axis=1)
    return np.asarray(ordered[:, 1:-1].mean(axis=1), dtype=np.float64)


def tasks_won(deltas: NDArray[np.float64], tie: float = 0.001) -> NDArray[np.float64]:
    """Tasks won minus tasks lost (Δ beyond ``±tie``), per program."""
    won = (deltas > tie).sum(axis=1) - (deltas < -tie).sum(axis=1)
    return np.asarray(won, dtype=np.float64)


def worst_task(deltas: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each program's worst per-task Δ (a pure tail signal)."""
    return np.asarray(deltas.min(axis=1), dtype=np.float64)


SIGNALS: Mapping[str, Aggregate] = {
    "mean": mean_over_tasks,
    "median": median_over_tasks,
    "trimmed-mean": trimmed_mean_over_tasks,
    "tasks-won": tasks_won,
    "worst-task": worst_task,
}
"""The signals compared, by name."""


@dataclass(frozen=True)
class TaskDeltas:
    """Per-task Δ of every evaluated program of a run, as a matrix.

    Attributes:
        programs: program ids, in ledger order (the rows).
        tasks: task names, in the run's order (the columns).
        deltas: ``(programs, tasks)`` Δ nDCG@10 against the objective over the scope.

    """

    programs: tuple[str, ...]
    tasks: tuple[str, ...]
    deltas: NDArray[np.float64]


def task_deltas(records: Sequence[LedgerRecord], objective: Objective, scope: Scope) -> TaskDeltas:
    """The per-task Δ of every ``ok`` record that has them against ``objective`` over ``scope``.

    Raises:
        ValueError: when no record has them, or the records disagree on the tasks.

    """
    rows: list[list[float]] = []
    programs: list[str] = []
    tasks: tuple[str, ...] | None = None
    for record in records:
        if record.status is not Status.OK:
            continue
        deltas = record.deltas(objective, scope)
        if not deltas:
            continue
        if tasks is None:
            tasks = tuple(deltas)
        elif tuple(deltas) != tasks:
            raise ValueError(f"{record.program_id} has tasks {list(deltas)}, not {list(tasks)}")
        programs.append(record.program_id)
        rows.append([deltas[t] for t in tasks])
    if tasks is None:
        raise ValueError(f"no evaluated record has per-task Δ against {objective} over {scope}")
    return TaskDeltas(tuple(programs), tasks, np.asarray(rows, dtype=np.float64))


@dataclass(frozen=True)
class SignalAgreement:
    """How well one signal on seen tasks predicts the target on held-aside tasks.

    Attributes:
        signal: the signal's name.
        spearman: Spearman's ρ per cut, in cut order.
        regret: the regret of the signal's pick per cut.

    """

    signal: str
    spearman: tuple[float, ...]
    regret: tuple[float, ...]

    @property
    def mean_spearman(self) -> float:
        """ρ averaged over the cuts."""
        return float(np.mean(self.spearman))

    @property
    def mean_regret(self) -> float:
        """The pick's regret averaged over the cuts."""
        return float(np.mean(self.regret))


def task_cuts(
    n_tasks: int, held_aside: int, cuts: int, seed: int
) -> list[tuple[NDArray[np.intp], NDArray[np.intp]]]:
    """``cuts`` distinct (seen, held-aside) partitions of ``range(n_tasks)``, seeded.

    All partitions when there are no more than ``cuts`` of them, else a seeded sample of
    distinct ones.

    Raises:
        ValueError: when ``held_aside`` leaves no task on either side.

    """
    if not 0 < held_aside < n_tasks:
        raise ValueError(f"hold aside between 1 and {n_tasks - 1} tasks, not {held_aside}")
    everything = np.arange(n_tasks, dtype=np.intp)
    if comb(n_tasks, held_aside) <= cuts:
        chosen = [np.asarray(c, dtype=np.intp) for c in combinations(range(n_tasks), held_aside)]
    else:
        rng = np.random.default_rng(seed)
        seen_sets: set[tuple[int, ...]] = set()
        chosen = []
        while len(chosen) < cuts:
            pick = tuple(sorted(int(i) for i in rng.choice(n_tasks, held_aside, replace=False)))
            if pick not in seen_sets:
                seen_sets.add(pick)
                chosen.append(np.asarray(pick, dtype=np.intp))
    return [(np.setdiff1d(everything, aside), aside) for aside in chosen]


def agreement(
    table: TaskDeltas,
    *,
    held_aside: int,
    cuts: int = 200,
    seed: int = 0,
    signals: Mapping[str, Aggregate] = SIGNALS,
    target: Aggregate = median_over_tasks,
) -> list[SignalAgreement]:
    """Each signal's agreement with ``target`` across seeded cuts of the run's tasks.

    Args:
        table: the programs' per-task Δ.
        held_aside: tasks held aside per cut.
        cuts: how many cuts (all of them when there are fewer).
        seed: the cuts' seed.
        signals: the signals to compare, by name.
        target: the aggregate over the held-aside tasks that a signal should predict.

    Returns:
        One :class:`SignalAgreement` per signal, in ``signals`` order.

    """
    partitions = task_cuts(len(table.tasks), held_aside, cuts, seed)
    out = []
    for name, signal in signals.items():
        rhos: list[float] = []
        regrets: list[float] = []
        for seen, aside in partitions:
            score = signal(table.deltas[:, seen])
            truth = target(table.deltas[:, aside])
            # A constant signal (or target) orders nothing: ρ is undefined, counted as 0.
            constant = np.ptp(score) == 0 or np.ptp(truth) == 0
            rhos.append(0.0 if constant else float(spearmanr(score, truth).statistic))
            regrets.append(float(truth.max() - truth[int(np.argmax(score))]))
        out.append(SignalAgreement(name, tuple(rhos), tuple(regrets)))
    return out


def agreement_json(
    table: TaskDeltas, rows: Sequence[SignalAgreement], held_aside: int
) -> dict[str, object]:
    """A JSON-ready description of :func:`agreement`'s result."""
    return {
        "programs": len(table.programs),
        "tasks": list(table.tasks),
        "held_aside": held_aside,
        "cuts": len(rows[0].spearman) if rows else 0,
        "signals": [
            {
                "signal": r.signal,
                "mean_spearman": r.mean_spearman,
                "mean_regret": r.mean_regret,
            }
            for r in rows
        ],
    }


def render_agreement(table: TaskDeltas, rows: Sequence[SignalAgreement], held_aside: int) -> str:
    """A Markdown table of each signal's mean ρ and pick regret (for the terminal and docs)."""
    cuts = len(rows[0].spearman) if rows else 0
    lines = [
        f"{len(table.programs)} programs, {len(table.tasks)} tasks; {cuts} cuts holding "
        f"{held_aside} tasks aside (target: median Δ over the held-aside tasks)",
        "",
        "| signal on the seen tasks | mean Spearman ρ | mean regret of the pick |",
        "|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r.signal} | {r.mean_spearman:.2f} | {r.mean_regret:.3f} |")
    return "\n".join(lines)
