"""Two runs of one transfer matrix side by side: what a setting changed, cell by cell.

The multilingual study runs its matrix twice, once under each tokenizer
(``transfer --tokenizer unicode`` and ``--tokenizer ascii``). A program that never tokenises
gives the same per-query scores in both; a lexical one does not, and what the change is worth
is, per cell, the paired difference of the two runs' per-query nDCG@10 (the same queries, the
same encoder, the same P0). :class:`SideBySide` pairs the cells present in both runs, keeps the
programs whose scores moved somewhere, and bootstraps each pair as a transfer cell is
bootstrapped (:func:`~embedding_ttc.analysis.cells.bootstrap_stats`, the pair's own seed).
Rendering is :func:`side_by_side_grids`; ``embedding-ttc report DIR --against OTHER`` writes
them beside DIR's tables.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from embedding_ttc.analysis.cells import BootstrapConfig, BootstrapStats, Cell, CellKey
from embedding_ttc.analysis.cells import bootstrap_stats as _bootstrap_stats
from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.evaluation.grid import Grid, Value


class SideBySideError(EmbeddingTTCError):
    """Two runs that cannot be compared cell by cell (another query set, or nothing shared)."""


@dataclass(frozen=True)
class PairedCell:
    """One (encoder, task, program) in both runs.

    Attributes:
        key: the cell's address.
        delta_a: ΔnDCG@10 against P0 in run A.
        delta_b: the same in run B.
        gap: run A's nDCG@10 minus run B's (the mean of the per-query differences).
        stats: the paired bootstrap of those per-query differences.

    """

    key: CellKey
    delta_a: float
    delta_b: float
    gap: float
    stats: BootstrapStats


@dataclass(frozen=True)
class SideBySide:
    """The cells two runs share, for the programs whose scores differ between them.

    Attributes:
        label_a: what run A is called (its tokenizer, when the runs differ by it).
        label_b: the same for run B.
        encoders: encoders with a paired cell (else with a shared one), in the order asked.
        tasks: the same for tasks.
        programs: the programs with a different per-query score in some shared cell.
        unchanged: programs shared by both runs whose every shared cell is identical.
        cells: the paired cells of :attr:`programs`.

    """

    label_a: str
    label_b: str
    encoders: tuple[str, ...]
    tasks: tuple[str, ...]
    programs: tuple[str, ...]
    unchanged: tuple[str, ...]
    cells: tuple[PairedCell, ...]

    @classmethod
    def from_cells(
        cls,
        a: Iterable[Cell],
        b: Iterable[Cell],
        *,
        labels: tuple[str, str] | None = None,
        config: BootstrapConfig | None = None,
        order: Sequence[str] = (),
    ) -> SideBySide:
        """Pair the cells of run ``a`` with those of run ``b``.

        Args:
            a: the cells of run A.
            b: the cells of run B.
            labels: the two runs' names; default: their tokenizers when each run has one
                and they differ, else ``A`` and ``B``.
            config: the bootstrap of each pair (default :class:`BootstrapConfig`).
            order: encoder and task names in the order to show them (a matrix's layout);
                names not in it follow, in the order of run A's cells.

        Raises:
            SideBySideError: no cell is in both runs, or a shared cell was scored on
                other queries in one run than in the other.

        """
        ours, theirs = list(a), {c.key: c for c in b}
        shared = [(c, theirs[c.key]) for c in ours if c.key in theirs]
        if not shared:
            raise SideBySideError("the two runs share no cell (encoder, task and program)")
        for x, y in shared:
            if x.per_query.keys() != y.per_query.keys():
                raise SideBySideError(f"{x.key}: the two runs scored different queries")
        moved = {x.program for x, y in shared if x.per_query != y.per_query}
        config = config or BootstrapConfig()
        paired = tuple(_pair(x, y, config) for x, y in shared if x.program in moved)
        shown = [c.key for c in paired] or [x.key for x, _ in shared]
        return cls(
            label_a=labels[0] if labels else _label([c for c, _ in shared], "A"),
            label_b=labels[1] if labels else _label([c for _, c in shared], "B"),
            encoders=_ordered((k.encoder for k in shown), order),
            tasks=_ordered((k.task for k in shown), order),
            programs=_ordered(x.program for x, _ in shared if x.program in moved),
            unchanged=_ordered(x.program for x, _ in shared if x.program not in moved),
            cells=paired,
        )

    def get(self, encoder: str, task: str, program: str) -> PairedCell | None:
        """The paired cell at that address, if the programs moved and both runs have it."""
        key = CellKey(encoder, task, program)
        return next((c for c in self.cells if c.key == key), None)


def _pair(a: Cell, b: Cell, config: BootstrapConfig) -> PairedCell:
    differences = [a.per_query[q] - b.per_query[q] for q in a.baseline_per_query]
    return PairedCell(
        key=a.key,
        delta_a=a.delta,
        delta_b=b.delta,
        gap=sum(differences) / len(differences) if differences else 0.0,
        stats=_bootstrap_stats(a.key, differences, config),
    )


def _label(cells: Sequence[Cell], fallback: str) -> str:
    names = {c.tokenizer for c in cells}
    if len(names) == 1 and None not in names:
        return str(next(iter(names)))
    return fallback


def _ordered(names: Iterable[str], order: Sequence[str] = ()) -> tuple[str, ...]:
    rank = {name: i for i, name in enumerate(order)}
    found = list(dict.fromkeys(names))
    return tuple(sorted(found, key=lambda n: (rank.get(n, len(rank)), found.index(n))))


def side_by_side_grids(s: SideBySide) -> dict[str, Grid]:
    """``gaps`` (per program, encoder and task: run A minus run B) and ``cells`` (every pair)."""
    a, b = s.label_a, s.label_b
    gaps: list[tuple[Value, ...]] = []
    for program in s.programs:
        for encoder in s.encoders:
            shown: list[Value] = []
            for task in s.tasks:
                pair = s.get(encoder, task, program)
                shown.append(None if pair is None else _marked(pair))
            gaps.append((program, encoder, *shown))
    cells: tuple[tuple[Value, ...], ...] = tuple(
        (
            c.key.encoder,
            c.key.task,
            c.key.program,
            c.delta_a,
            c.delta_b,
            c.gap,
            c.stats.ci_low,
            c.stats.ci_high,
        )
        for c in s.cells
    )
    unchanged = ", ".join(s.unchanged) or "none"
    return {
        "gaps": Grid(
            f"nDCG@10 under {a} minus under {b}, per cell (* : bootstrap 95% CI excludes 0); "
            f"identical in every cell: {unchanged}",
            ("program", "encoder", *s.tasks),
            tuple(gaps),
            ("",) * (2 + len(s.tasks)),
        ),
        "cells": Grid(
            f"Every cell whose scores differ between {a} and {b}",
            (
                *("encoder", "task", "program", f"Δ vs P0 ({a})", f"Δ vs P0 ({b})"),
                *(f"{a} − {b}", "CI low", "CI high"),
            ),
            cells,
            ("", "", "", *["{:+.4f}"] * 5),
        ),
    }


def _marked(pair: PairedCell) -> str:
    significant = pair.stats.significant_win or pair.stats.significant_loss
    return f"{pair.gap:+.4f}{'*' if significant else ''}"
