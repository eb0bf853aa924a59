"""The proposer's prompt (paper §3.2): task, interface, constraints, primitives, history, frontier.

:func:`render_prompt` is a pure function of the :class:`~embedding_ttc.search.records.SearchState`:
the same state always renders the same text, pinned by a golden test. Its sections, in order:

1. the role and the task (one new program that raises nDCG@10 over P0 on every task, cheaply);
2. the program interface (:data:`~embedding_ttc.search.interface.INTERFACE_TEXT`);
3. the six constraints, numbered (:data:`~embedding_ttc.search.interface.CONSTRAINTS`);
4. the allowed imports and the primitives, one line each, generated from the primitives
   modules (``__all__`` or their public definitions, ``inspect.signature`` and the first
   docstring line) so the list never drifts from the code;
5. the research inspirations the paper names (Rocchio PRF, MaxSim, cross-adapter voting,
   Matryoshka cascading, substructure decomposition, score-distribution analysis);
6. a table of every program so far: id, parent, status, mean ΔnDCG@10, W/T/L, cost ratio, the
   per-task deltas, and the novelty claim or the rejection reason;
7. the complete source of the top-k frontier programs;
8. the reply format: a module docstring with Novelty, Hypothesis, Parent, Root-cause analysis
   and Forensics, then one fenced ``python`` block holding the whole program file.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import re
from collections.abc import Callable
from typing import Any

from embedding_ttc.search.interface import (
    ALLOWED_MODULES,
    CONSTRAINTS,
    INTERFACE_TEXT,
    PROGRAM_FUNCTION,
    Status,
)
from embedding_ttc.search.records import FrontierProgram, LedgerRecord, SearchState

__all__ = ["INSPIRATIONS", "PRIMITIVE_MODULES", "primitive_reference", "render_prompt"]

PRIMITIVE_PACKAGE = "embedding_ttc.programs.primitives"

PRIMITIVE_MODULES: tuple[str, ...] = (
    "channels",
    "scores",
    "feedback",
    "late",
    "chunking",
    "lexical",
    "anchors",
)
"""The primitives modules listed in the prompt, in this order (a test checks none is missing)."""

NOTE_CHARS = 160
"""Longest novelty claim or rejection reason shown in the history table (then ``…``)."""

INSPIRATIONS: tuple[tuple[str, str], ...] = (
    (
        "Rocchio pseudo-relevance feedback",
        "Move the query toward the centroid of its top-ranked documents and away from the "
        "bottom-ranked ones (Rocchio 1971), then rescore; in embedding space this is a vector "
        "update, and several rounds can refine it further.",
    ),
    (
        "ColBERT-style MaxSim",
        "Score a document by its best-matching piece rather than by one pooled vector "
        "(Khattab & Zaharia 2020): split documents into chunks, encode them once at index time, "
        "and take the maximum (or a robust mean) of the query-chunk similarities.",
    ),
    (
        "Cross-adapter voting",
        "Encode the same texts under different views (query, passage, text-matching, "
        "classification) or swap perspectives (documents encoded as queries), and let the "
        "views vote, e.g. by reciprocal rank fusion, so that no single view's bias decides.",
    ),
    (
        "Matryoshka cascading",
        "Truncated embeddings (`dim=`) are cheap coarse rankers: rank with a prefix of the "
        "dimensions first and spend full-dimension or extra encodes only where the coarse "
        "ranking is uncertain.",
    ),
    (
        "Document substructure decomposition",
        "Long documents mix topics; sentences, sentence pairs and paragraphs expose the part "
        "that answers the query, and combining granularities covers both short and long "
        "evidence.",
    ),
    (
        "Score-distribution analysis",
        "Standardise scores per query (rows) or per document (columns) to remove hubness and "
        "query difficulty, read the shape of a query's score distribution (gap, spread, "
        "agreement between channels) and act on it.",
    ),
)
"""The research inspirations of the paper's proposer (§3.2), one or two sentences each."""


def render_prompt(state: SearchState, *, top_k: int = 5) -> str:
    """Render the proposer's prompt for ``state`` (deterministic, no side effect).

    Args:
        state: what the proposer may look at.
        top_k: how many frontier programs to show with their complete source.

    Returns:
        The prompt text.

    """
    sections = [
        _task(state),
        _section("Program interface", _fenced(INTERFACE_TEXT)),
        _section("Constraints", _constraints()),
        _section("Allowed imports and primitives", primitive_reference()),
        _section("Research inspirations", _inspirations()),
        _section("History of every program so far", _history(state)),
        _section("Frontier programs, best first", _frontier(state, top_k)),
        _section("Reply format", _reply_format(state)),
    ]
    return "\n\n".join(sections) + "\n"


def _section(title: str, body: str) -> str:
    return f"## {title}\n\n{body.rstrip()}"


def _task(state: SearchState) -> str:
    tasks = ", ".join(state.tasks) if state.tasks else "(none)"
    return (
        "# Program search for test-time compute in text retrieval\n\n"
        "You are a research engineer. A frozen text-embedding model has encoded the queries and "
        "documents of several retrieval tasks; the baseline P0 ranks documents by the cosine "
        "matrix S. A *program* rescores S deterministically, using only the frozen encoder "
        "(every text it encodes costs one unit of test-time compute), the raw texts and "
        "numpy.\n\n"
        f"Your task: write ONE new program (generation {state.generation}) that improves "
        "nDCG@10 over P0 on every discovery task (a win on each task, not a large gain on a "
        "few) at a low cost ratio c = (T_base + T_prog) / T_base, where T_base counts the "
        "texts encoded once and T_prog the extra texts your program encodes. Learn from the "
        "history: build on what won, state why earlier programs failed, and do not repeat "
        "an idea that was ruled out.\n\n"
        "Programs are graded by structural depth, from shallow to deep: (1) a single-pass "
        "manipulation of S; (2) one new scoring channel; (3) several channels fused; "
        "(4) a multi-round pipeline (rank, refine, rescore); (5) a multi-stage conditional "
        "pipeline whose stages react to the scores. Depth is welcome when each stage has a "
        "reason.\n\n"
        f"Discovery tasks ({len(state.tasks)}): {tasks}."
    )


def _fenced(text: str, lang: str = "python") -> str:
    """Fence ``text`` with more backticks than any run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"


def _constraints() -> str:
    return "\n".join(
        f"{i}. {name}: {statement}" for i, (name, statement) in enumerate(CONSTRAINTS, start=1)
    )


def _inspirations() -> str:
    return "\n".join(f"- {title}: {text}" for title, text in INSPIRATIONS)


# ---------------------------------------------------------------------------------------------
# Primitives, listed from the code


@functools.cache
def primitive_reference() -> str:
    """The allowed imports and every primitive with a one-line signature and summary.

    Generated from :data:`PRIMITIVE_MODULES`: each module's ``__all__`` when it has one, else
    its public functions, classes and UPPER_CASE constants defined in the module, in source
    order. Signatures drop annotations to stay compact.
    """
    lines = [
        "Imports allowed: " + ", ".join(ALLOWED_MODULES) + ".",
        "Import primitives by module, e.g. "
        f"`from {PRIMITIVE_PACKAGE}.scores import candidate_mask, rrf, zscore_rows`.",
        "Candidate masks: `mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)` is "
        "None when every query ranks every document; pass `mask=` to every primitive that "
        "ranks, selects or standardises, so that only each query's candidates count.",
    ]
    for short in PRIMITIVE_MODULES:
        module = importlib.import_module(f"{PRIMITIVE_PACKAGE}.{short}")
        lines.append("")
        lines.append(f"{PRIMITIVE_PACKAGE}.{short}:")
        lines.extend(f"  {entry}" for entry in _module_entries(module))
    return "\n".join(lines)


def _module_entries(module: Any) -> list[str]:
    names = list(getattr(module, "__all__", None) or _public_names(module))
    entries: list[str] = []
    for name in names:
        obj = getattr(module, name)
        if inspect.isclass(obj):
            entries.extend(_class_entries(name, obj))
        elif callable(obj):
            entries.append(f"{name}{_signature(obj)}{_summary(obj)}")
        elif isinstance(obj, (bool, int, float, str)):
            entries.append(f"{name} = {obj!r}")
    return entries


def _public_names(module: Any) -> list[str]:
    """Public functions and classes defined in ``module``, and its UPPER_CASE constants."""
    names: list[str] = []
    for node in ast.parse(inspect.getsource(module)).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.extend([node.target.id] if node.target.id.isupper() else [])
        elif isinstance(node, ast.Assign):
            names.extend(t.id for t in node.targets if isinstance(t, ast.Name) and t.id.isupper())
    return [n for n in names if not n.startswith("_")]


def _class_entries(name: str, cls: type) -> list[str]:
    params = inspect.signature(cls).parameters
    head = name if any(p.startswith("_") for p in params) else f"{name}{_signature(cls)}"
    entries = [f"{head}{_summary(cls)}"]
    for attr, raw in vars(cls).items():
        if attr.startswith("_"):
            continue
        if isinstance(raw, property):
            entries.append(f"  .{attr}{_summary(raw)}")
        elif isinstance(raw, (classmethod, staticmethod)) or inspect.isfunction(raw):
            member = getattr(cls, attr)
            drop_self = inspect.isfunction(raw)
            entries.append(f"  .{attr}{_signature(member, drop_first=drop_self)}{_summary(raw)}")
    return entries


def _signature(obj: Callable[..., Any], *, drop_first: bool = False) -> str:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return "(...)"
    params = list(sig.parameters.values())[1 if drop_first else 0 :]
    bare = [p.replace(annotation=inspect.Parameter.empty) for p in params]
    return str(sig.replace(parameters=bare, return_annotation=inspect.Signature.empty))


def _summary(obj: Any) -> str:
    doc = inspect.getdoc(obj.__func__ if isinstance(obj, (classmethod, staticmethod)) else obj)
    first = doc.strip().splitlines()[0].strip() if doc and doc.strip() else ""
    first = re.sub(r":\w+:`", "`", first).replace("``", "`")  # reST roles to plain backticks
    return f" — {first}" if first else ""


# ---------------------------------------------------------------------------------------------
# History and frontier


def _history(state: SearchState) -> str:
    if not state.history:
        return "(no program has been evaluated yet)"
    counts: dict[str, int] = {}
    for record in state.history:
        counts[record.status.value] = counts.get(record.status.value, 0) + 1
    summary = ", ".join(f"{n} {status}" for status, n in counts.items())
    header = ["id", "parent", "status", "mean Δ", "W/T/L", "cost", *state.tasks, "note"]
    rows = [_row(record, state.tasks) for record in state.history]
    table = [_table_line(header), _table_line(["---"] * len(header))]
    table += [_table_line(row) for row in rows]
    return (
        f"{len(state.history)} programs ({summary}). Δ is nDCG@10 minus P0's; W/T/L counts "
        "tasks won, tied (|Δ| ≤ 0.001) and lost; cost is the cost ratio c; the note is the "
        "novelty claim, or why the program failed.\n\n" + "\n".join(table)
    )


def _row(record: LedgerRecord, tasks: tuple[str, ...]) -> list[str]:
    ok = record.status == Status.OK
    mean = f"{record.mean_delta:+.4f}" if ok and record.mean_delta is not None else "—"
    wtl = f"{record.wins}/{record.ties}/{record.losses}" if ok else "—"
    cost = f"{record.cost_ratio:.2f}" if ok and record.cost_ratio is not None else "—"
    per_task = [
        f"{record.per_task_delta[t]:+.4f}" if ok and t in record.per_task_delta else ""
        for t in tasks
    ]
    if ok:
        note = record.novelty
    else:
        note = record.reason + (f" (tried: {record.novelty})" if record.novelty else "")
    return [
        record.program_id,
        record.parent_id or "—",
        record.status.value,
        mean,
        wtl,
        cost,
        *per_task,
        _clip(note),
    ]


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= NOTE_CHARS else flat[: NOTE_CHARS - 1].rstrip() + "…"


def _table_line(cells: list[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def _frontier(state: SearchState, top_k: int) -> str:
    shown = state.frontier[:top_k]
    if not shown:
        return "(no frontier program yet: P0, which returns S unchanged, is the baseline)"
    return "\n\n".join(_frontier_program(program) for program in shown)


def _frontier_program(program: FrontierProgram) -> str:
    record = program.record
    facts = []
    if record.mean_delta is not None:
        facts.append(f"mean Δ {record.mean_delta:+.4f}")
    facts.append(f"W/T/L {record.wins}/{record.ties}/{record.losses}")
    if record.cost_ratio is not None:
        facts.append(f"cost {record.cost_ratio:.2f}")
    facts.append(f"parent {record.parent_id or '—'}")
    return f"### {record.program_id} ({', '.join(facts)})\n\n{_fenced(program.source)}"


# ---------------------------------------------------------------------------------------------
# Reply format


def _reply_format(state: SearchState) -> str:
    parent = state.frontier[0].record.program_id if state.frontier else "g0000-P0"
    template = (
        '"""<ProgramName>: <one-line summary>.\n\n'
        "Novelty: <one sentence: what is structurally new compared with every program above>.\n"
        "Hypothesis: <why it should raise nDCG@10 on every task, and at what cost>.\n"
        f"Parent: <the id of the program it builds on, e.g. {parent}>\n"
        "Root-cause analysis: <why earlier programs failed or lost tasks, citing their ids>.\n"
        "Forensics: <task by task, where the parent wins and loses, and what this program "
        "changes there>.\n"
        '"""\n\n'
        "import numpy as np\n\n\n"
        f"def {PROGRAM_FUNCTION}(Q, D, S, ctx):\n"
        "    ...\n"
    )
    return (
        "Think first if you wish, in prose. Then give exactly ONE fenced ```python block "
        "that contains the whole program file, nothing else. The file starts with a module "
        "docstring holding the five labelled lines below (keep the labels), imports only the "
        f"allowed modules, and defines `{PROGRAM_FUNCTION}(Q, D, S, ctx)` at module level:"
        "\n\n" + _fenced(template)
    )
