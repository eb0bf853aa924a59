"""The discovery table (the paper's Table 2 layout) from per-(task, program) summary records.

Per program, over the tasks of a suite:

* ``c``: the suite-level cost ratio ``Σ_t (T_base,t + T_prog,t) / Σ_t T_base,t`` (§3.3: the
  base and program calls are summed over all tasks before dividing);
* mean ΔnDCG@10: the mean over tasks of each task's Δ (itself the mean over the task's queries
  of the per-query difference against P0, the paper's footnote);
* W/T/L over tasks at ±0.001;
* the per-task Δ;
* the mean over tasks of each extra measure of ``--metrics`` (pytrec_eval's aggregate on each
  task), in columns after the mean nDCG@10; ``None`` (shown ``–``) for a program that lacks
  the measure on a task.

The object computes; its renderings are :class:`~embedding_ttc.evaluation.grid.Grid` s, which
only format (``to_markdown``, ``to_csv`` and ``to_latex``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from embedding_ttc.evaluation.comparison import WTL
from embedding_ttc.evaluation.grid import Grid, tex_escape
from embedding_ttc.evaluation.records import SummaryRow


@dataclass(frozen=True)
class ProgramLine:
    """One program's line of the table."""

    program: str
    cost_ratio: float
    mean_delta: float
    wtl: WTL
    mean_ndcg: float
    per_task_delta: dict[str, float]
    index_calls: int
    query_calls: int
    encode_seconds: float
    algebra_seconds: float
    metrics: dict[str, float | None] = field(default_factory=dict)


@dataclass(frozen=True)
class DiscoveryTable:
    """Programs × tasks for one encoder; ``metrics`` names the extra measures' columns."""

    encoder: str
    tasks: list[str]
    lines: list[ProgramLine]
    metrics: list[str] = field(default_factory=list)

    @classmethod
    def from_rows(cls, rows: Sequence[SummaryRow]) -> DiscoveryTable:
        """Aggregate the records of one encoder (every program on the same tasks)."""
        encoders = {r.encoder for r in rows}
        if len(encoders) != 1:
            raise ValueError(f"a discovery table covers one encoder, got {sorted(encoders)}")
        tasks = list(dict.fromkeys(r.task for r in rows))
        programs = list(dict.fromkeys(r.program for r in rows))
        metrics = list(dict.fromkeys(m for r in rows for m in r.metrics))
        lines = []
        for program in programs:
            mine = {r.task: r for r in rows if r.program == program}
            missing = [t for t in tasks if t not in mine]
            if missing:
                raise ValueError(f"program {program} has no result on {missing}")
            deltas = {t: mine[t].comparison.delta_ndcg_at_10 for t in tasks}
            base = sum(mine[t].base_calls for t in tasks)
            prog = sum(mine[t].program_calls for t in tasks)
            lines.append(
                ProgramLine(
                    program=program,
                    cost_ratio=(base + prog) / base if base else float("nan"),
                    mean_delta=sum(deltas.values()) / len(tasks),
                    wtl=WTL.count(deltas.values()),
                    mean_ndcg=sum(mine[t].comparison.ndcg_at_10 for t in tasks) / len(tasks),
                    per_task_delta=deltas,
                    index_calls=sum(mine[t].index_calls for t in tasks),
                    query_calls=sum(mine[t].query_calls for t in tasks),
                    encode_seconds=sum(mine[t].encode_seconds for t in tasks),
                    algebra_seconds=sum(mine[t].algebra_seconds for t in tasks),
                    metrics={m: _mean_over(mine, tasks, m) for m in metrics},
                )
            )
        lines.sort(key=lambda line: (line.cost_ratio, line.program))
        return cls(encoders.pop(), tasks, lines, metrics)

    def grid(self) -> Grid:
        """The table as Markdown shows it: ``c`` to two decimals, the per-task Δ after the means."""
        extra = [f"mean {m}" for m in self.metrics]
        header = ("program", "c", "mean ΔnDCG@10", "W/T/L", "mean nDCG@10", *extra, *self.tasks)
        rows = tuple(
            (
                ln.program,
                ln.cost_ratio,
                ln.mean_delta,
                str(ln.wtl),
                ln.mean_ndcg,
                *(ln.metrics[m] for m in self.metrics),
                *(ln.per_task_delta[t] for t in self.tasks),
            )
            for ln in self.lines
        )
        formats = ("", "{:.2f}", "{:+.4f}", "", "{:.4f}", *["{:.4f}"] * len(extra))
        return Grid(self._title(), header, rows, (*formats, *["{:+.4f}"] * len(self.tasks)))

    def latex_grid(self) -> Grid:
        """The layout of the paper's Table 2 (without per-task columns): ``c`` to one decimal.

        The extra measures, if any, follow as columns of their means over the tasks.
        """
        extra = tuple(f"mean {m}" for m in self.metrics)
        tex_header = (
            r"\textbf{Program}",
            "$c$",
            r"mean $\Delta$nDCG@10",
            f"W/T/L ({len(self.tasks)} tasks)",
            *(f"mean {tex_escape(m)}" for m in self.metrics),
        )
        rows = tuple(
            (
                ln.program,
                ln.cost_ratio,
                ln.mean_delta,
                str(ln.wtl),
                *(ln.metrics[m] for m in self.metrics),
            )
            for ln in self.lines
        )
        formats = ("", "{:.1f}", "{:+.4f}", "", *["{:.4f}"] * len(extra))
        header = ("program", "c", "mean ΔnDCG@10", "W/T/L", *extra)
        return Grid(self._title(), header, rows, formats, tex_header=tex_header)

    def csv_grid(self) -> Grid:
        """Machine-readable numbers (full precision), W/T/L in three columns, then the costs."""
        header = (
            "program",
            "cost_ratio",
            "mean_delta",
            "wins",
            "ties",
            "losses",
            "mean_ndcg",
            *(f"mean:{m}" for m in self.metrics),
            *(f"delta:{t}" for t in self.tasks),
            "index_calls",
            "query_calls",
            "encode_seconds",
            "algebra_seconds",
        )
        rows = tuple(
            (
                ln.program,
                ln.cost_ratio,
                ln.mean_delta,
                ln.wtl.wins,
                ln.wtl.ties,
                ln.wtl.losses,
                ln.mean_ndcg,
                *(ln.metrics[m] for m in self.metrics),
                *(ln.per_task_delta[t] for t in self.tasks),
                ln.index_calls,
                ln.query_calls,
                ln.encode_seconds,
                ln.algebra_seconds,
            )
            for ln in self.lines
        )
        return Grid(self._title(), header, rows, ("",) * len(header))

    def _title(self) -> str:
        return f"Discovery table: {self.encoder} on {len(self.tasks)} tasks"

    def to_markdown(self) -> str:
        """A GitHub-flavoured Markdown table."""
        return self.grid().to_markdown()

    def to_csv(self) -> str:
        """CSV with machine-readable numbers (full precision)."""
        return self.csv_grid().to_csv()

    def to_latex(self) -> str:
        """A booktabs table in the layout of the paper's Table 2 (without per-task columns)."""
        return self.latex_grid().to_latex()


def _mean_over(rows: dict[str, SummaryRow], tasks: list[str], measure: str) -> float | None:
    """The mean over ``tasks`` of a measure's aggregate (``None``: missing on a task)."""
    values = [rows[t].metrics.get(measure) for t in tasks]
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present and len(present) == len(values) else None
