"""A titled table of typed values, rendered as Markdown, CSV and LaTeX (and HTML by the page).

A :class:`Grid` only formats: every rendering shows a value by the same rule
(:meth:`Grid.shown`), CSV keeps the raw values. It is the one table writer of the package: the
evaluation's discovery table (:mod:`~embedding_ttc.evaluation.table`) and every table of the
report (:mod:`~embedding_ttc.analysis.tables`) are grids.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

Value = str | int | float | bool | None


@dataclass(frozen=True)
class Grid:
    """A titled table of typed values with a display format per column.

    ``formats[i]`` is a :meth:`str.format` spec applied to numbers of column ``i`` in Markdown
    and LaTeX (``""``: ``str``); CSV writes the raw values. ``None`` is shown as ``–`` and
    written empty. ``tex_header``, when given, is the LaTeX header row's cells as written (TeX
    already: math, units), instead of the bold, escaped :attr:`header`.
    """

    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[Value, ...], ...]
    formats: tuple[str, ...]
    tex_header: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        width = len(self.header)
        if len(self.formats) != width:
            raise ValueError(f"grid {self.title!r}: {len(self.formats)} formats, {width} columns")
        if self.tex_header is not None and len(self.tex_header) != width:
            raise ValueError(
                f"grid {self.title!r}: {len(self.tex_header)} TeX header cells, {width} columns"
            )
        for row in self.rows:
            if len(row) != width:
                raise ValueError(f"grid {self.title!r}: a row of {len(row)} cells, {width} columns")

    def shown(self, i: int, value: Value) -> str:
        """Column ``i``'s ``value`` as every rendering prints it ("–" for a missing cell)."""
        if value is None:
            return "–"
        if isinstance(value, float) and value != value:  # nan: no cell to aggregate
            return "–"
        if isinstance(value, bool) or not isinstance(value, int | float):
            return str(value)
        return self.formats[i].format(value) if self.formats[i] else str(value)

    def to_markdown(self) -> str:
        """A GitHub-flavoured Markdown table."""
        out = ["| " + " | ".join(self.header) + " |", "|" + "---|" * len(self.header)]
        for row in self.rows:
            out.append("| " + " | ".join(self.shown(i, v) for i, v in enumerate(row)) + " |")
        return "\n".join(out) + "\n"

    def to_csv(self) -> str:
        """CSV with the raw values."""
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(self.header)
        for row in self.rows:
            writer.writerow(["" if v is None else v for v in row])
        return buf.getvalue()

    def to_latex(self) -> str:
        """A booktabs tabular; the first column (names) is set in small caps."""
        spec = "@{}l" + "c" * (len(self.header) - 1) + "@{}"
        header = self.tex_header or tuple(rf"\textbf{{{tex_escape(h)}}}" for h in self.header)
        lines = [
            rf"\begin{{tabular}}{{{spec}}}",
            r"\toprule",
            " & ".join(header) + r" \\",
            r"\midrule",
        ]
        for row in self.rows:
            shown = [self.shown(i, v) for i, v in enumerate(row)]
            first = rf"\textsc{{{tex_escape(shown[0])}}}" if shown else ""
            rest = [_tex_cell(s) for s in shown[1:]]
            lines.append(" & ".join([first, *rest]) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}", ""]
        return "\n".join(lines)


_NUMERIC = re.compile(r"^[+\-]?[0-9][0-9./,]*%?\*?$")


def tex_escape(text: str) -> str:
    """``text`` with TeX's special characters escaped, and ``–``, ``−``, ``Δ`` in TeX."""
    for ch in "\\&%$#_{}":
        text = text.replace(ch, "\\" + ch)
    return text.replace("–", "--").replace("−", "-").replace("Δ", r"$\Delta$")


def _tex_cell(text: str) -> str:
    if _NUMERIC.match(text):
        star = text.endswith("*")
        body = tex_escape(text.rstrip("*"))
        return f"${body}{'^{*}' if star else ''}$"
    return tex_escape(text)
