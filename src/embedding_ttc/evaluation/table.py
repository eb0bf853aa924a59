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

The object computes; ``to_markdown``, ``to_csv`` and ``to_latex`` only format.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, field

from embedding_ttc.evaluation.comparison import WTL
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

    def _header(self) -> list[str]:
        extra = [f"mean {m}" for m in self.metrics]
        return ["program", "c", "mean ΔnDCG@10", "W/T/L", "mean nDCG@10", *extra, *self.tasks]

    def _cells(self, line: ProgramLine) -> list[str]:
        return [
            line.program,
            f"{line.cost_ratio:.2f}",
            f"{line.mean_delta:+.4f}",
            str(line.wtl),
            f"{line.mean_ndcg:.4f}",
            *(_number(line.metrics[m]) for m in self.metrics),
            *(f"{line.per_task_delta[t]:+.4f}" for t in self.tasks),
        ]

    def to_markdown(self) -> str:
        """A GitHub-flavoured Markdown table."""
        header = self._header()
        out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        out += ["| " + " | ".join(self._cells(line)) + " |" for line in self.lines]
        return "\n".join(out) + "\n"

    def to_csv(self) -> str:
        """CSV with machine-readable numbers (full precision)."""
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(
            ["program", "cost_ratio", "mean_delta", "wins", "ties", "losses", "mean_ndcg"]
            + [f"mean:{m}" for m in self.metrics]
            + [f"delta:{t}" for t in self.tasks]
            + ["index_calls", "query_calls", "encode_seconds", "algebra_seconds"]
        )
        for ln in self.lines:
            writer.writerow(
                [ln.program, ln.cost_ratio, ln.mean_delta, ln.wtl.wins, ln.wtl.ties, ln.wtl.losses]
                + [ln.mean_ndcg]
                + ["" if ln.metrics[m] is None else ln.metrics[m] for m in self.metrics]
                + [ln.per_task_delta[t] for t in self.tasks]
                + [ln.index_calls, ln.query_calls, ln.encode_seconds, ln.algebra_seconds]
            )
        return buf.getvalue()

    def to_latex(self) -> str:
        """A booktabs table in the layout of the paper's Table 2 (without per-task columns).

        The extra measures, if any, follow as columns of their means over the tasks.
        """
        rows = [
            rf"\textsc{{{_tex(ln.program)}}} & ${ln.cost_ratio:.1f}$ & ${ln.mean_delta:+.4f}$ & "
            rf"${ln.wtl}$"
            + "".join(f" & {_tex_number(ln.metrics[m])}" for m in self.metrics)
            + r" \\"
            for ln in self.lines
        ]
        n = len(self.tasks)
        extra = "".join(f" & mean {_tex(m)}" for m in self.metrics)
        return "\n".join(
            [
                rf"\begin{{tabular}}{{@{{}}lccc{'c' * len(self.metrics)}@{{}}}}",
                r"\toprule",
                rf"\textbf{{Program}} & $c$ & mean $\Delta$nDCG@10 & W/T/L ({n} tasks){extra} \\",
                r"\midrule",
                *rows,
                r"\bottomrule",
                r"\end{tabular}",
                "",
            ]
        )


def _mean_over(rows: dict[str, SummaryRow], tasks: list[str], measure: str) -> float | None:
    """The mean over ``tasks`` of a measure's aggregate (``None``: missing on a task)."""
    values = [rows[t].metrics.get(measure) for t in tasks]
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present and len(present) == len(values) else None


def _number(value: float | None) -> str:
    return "–" if value is None else f"{value:.4f}"


def _tex_number(value: float | None) -> str:
    return "--" if value is None else f"${value:.4f}$"


def _tex(text: str) -> str:
    for ch in "\\&%$#_{}":
        text = text.replace(ch, "\\" + ch)
    return text
