"""The proposer's prompt (paper §3.2): task, interface, constraints, primitives, history, frontier.

:func:`render_prompt` is a pure function of the :class:`~embedding_ttc.search.state.SearchState`:
the same state always renders the same text, pinned by a golden test. Its sections, in order:

1. the role and the task (one new program that raises nDCG@10 over P0 on every task, cheaply);
2. the program interface (:data:`~embedding_ttc.program_files.contract.INTERFACE_TEXT`);
3. the six constraints, numbered (:data:`~embedding_ttc.program_files.contract.CONSTRAINTS`);
4. the allowed imports and the primitives, one line each, generated from the primitives
   modules (:func:`~embedding_ttc.search.prompts.primitives.primitive_reference`) so the
   list never drifts from the code;
5. the research inspirations the paper names (Rocchio PRF, MaxSim, cross-adapter voting,
   Matryoshka cascading, substructure decomposition, score-distribution analysis);
6. a table of every program so far: id, parent, status, mean ΔnDCG@10, W/T/L, cost ratio, the
   per-task deltas, and the novelty claim or the rejection reason;
7. the complete source of the top-k frontier programs;
8. the reply format: a module docstring with Novelty, Hypothesis, Parent, Root-cause analysis
   and Forensics, then one fenced ``python`` block holding the whole program file.
"""

from __future__ import annotations

from embedding_ttc.program_files.contract import INTERFACE_TEXT, PROGRAM_FUNCTION
from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.records import LedgerRecord
from embedding_ttc.search.prompts.common import (
    clip,
    fenced,
    numbered_constraints,
    section,
    status_counts,
    task_list,
)
from embedding_ttc.search.prompts.inspirations import PAPER_INSPIRATIONS
from embedding_ttc.search.prompts.primitives import primitive_reference
from embedding_ttc.search.state import FrontierProgram, SearchState

NOTE_CHARS = 160
"""Longest novelty claim or rejection reason shown in the history table (then ``…``)."""


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
        section("Program interface", fenced(INTERFACE_TEXT)),
        section("Constraints", numbered_constraints()),
        section("Allowed imports and primitives", primitive_reference()),
        section("Research inspirations", _inspirations()),
        section("History of every program so far", _history(state)),
        section("Frontier programs, best first", _frontier(state, top_k)),
        section("Reply format", _reply_format(state)),
    ]
    return "\n\n".join(sections) + "\n"


def _task(state: SearchState) -> str:
    tasks = task_list(state)
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


def _inspirations() -> str:
    return "\n".join(f"- {title}: {text}" for title, text in PAPER_INSPIRATIONS)


# ---------------------------------------------------------------------------------------------
# History and frontier


def _history(state: SearchState) -> str:
    if not state.history:
        return "(no program has been evaluated yet)"
    counts = status_counts(state.history)
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
    wtl = str(record.wtl) if ok else "—"
    cost = f"{record.cost_ratio:.2f}" if ok and record.cost_ratio is not None else "—"
    deltas = record.per_task_delta
    per_task = [f"{deltas[t]:+.4f}" if ok and t in deltas else "" for t in tasks]
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
        clip(note, NOTE_CHARS),
    ]


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
    facts.append(f"W/T/L {record.wtl}")
    if record.cost_ratio is not None:
        facts.append(f"cost {record.cost_ratio:.2f}")
    facts.append(f"parent {record.parent_id or '—'}")
    return f"### {record.program_id} ({', '.join(facts)})\n\n{fenced(program.source)}"


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
        "\n\n" + fenced(template)
    )
