"""The proposer prompt: pinned by a golden file, and complete for the state it renders.

When a change to the prompt is intended, regenerate the golden file and review its diff:

    EMBEDDING_TTC_UPDATE_GOLDEN=1 .venv/bin/pytest tests/search/test_prompt.py
    git diff tests/search/golden/prompt.txt

The primitives section is generated from the primitives modules, so a change to a primitive's
signature or first docstring line changes the golden file too (that is the point).
"""

from __future__ import annotations

import os
import pkgutil
from pathlib import Path

import embedding_ttc.programs.primitives as primitives_package
from embedding_ttc.program_files.contract import CONSTRAINTS, INTERFACE_TEXT
from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.records import LedgerRecord
from embedding_ttc.search.prompts.full import render_prompt
from embedding_ttc.search.prompts.inspirations import PAPER_INSPIRATIONS
from embedding_ttc.search.prompts.primitives import (
    PRIMITIVE_MODULES,
    UNLISTED_MODULES,
    primitive_reference,
)
from embedding_ttc.search.state import FrontierProgram, SearchState
from ledger_records import evaluated

GOLDEN = Path(__file__).parent / "golden" / "prompt.txt"
UPDATE = os.environ.get("EMBEDDING_TTC_UPDATE_GOLDEN") == "1"

TASKS = ("AILAStatutes", "FinQARetrieval", "LIMITSmall")

G1_SOURCE = '''\
"""ColZ: standardise each document's column before ranking.

Novelty: removes document hubness with a per-column z-score.
Hypothesis: hub documents close to every query crowd the top ranks.
Parent: g0000-P0
"""

from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_cols


def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    return zscore_cols(S, mask)
'''


def small_state() -> SearchState:
    """Two evaluated records (P0 and g0001), one rejected (g0002), g0001 on the frontier."""
    p0 = evaluated(
        0,
        "g0000-P0",
        dict.fromkeys(TASKS, 0.0),
        novelty="the cosine baseline",
        proposer="library",
    )
    deltas = {"AILAStatutes": 0.0213, "FinQARetrieval": -0.0042, "LIMITSmall": 0.0005}
    g1 = evaluated(
        1,
        "g0001",
        deltas,
        parent_id="g0000-P0",
        novelty="removes document hubness with a per-column z-score.",
        hypothesis="hub documents close to every query crowd the top ranks.",
        proposer="openai",
        model="canned-model",
    )
    g2 = LedgerRecord(
        generation=2,
        program_id="g0002",
        parent_id="g0001",
        status=Status.REJECTED,
        reason="no-external-model: import of 'os' at line 3 is not allowed | "
        + "a very long explanation " * 12,
        novelty="reads a cached index from disk",
        proposer="openai",
    )
    return SearchState(
        generation=3,
        history=(p0, g1, g2),
        frontier=(FrontierProgram(g1, G1_SOURCE),),
        tasks=TASKS,
        seed=7,
    )


def test_golden_prompt():
    text = render_prompt(small_state())
    if UPDATE:
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8")
    expected = GOLDEN.read_text(encoding="utf-8")
    assert text == expected, (
        "the rendered prompt differs from tests/search/golden/prompt.txt; if the change is "
        "intended, rerun with EMBEDDING_TTC_UPDATE_GOLDEN=1 and review the diff"
    )


def test_prompt_is_deterministic():
    assert render_prompt(small_state()) == render_prompt(small_state())


def test_prompt_holds_every_task_program_and_frontier_source():
    state = small_state()
    text = render_prompt(state)
    for task in state.tasks:
        assert f" {task} |" in text  # a history column
    for record in state.history:
        assert f"| {record.program_id} |" in text  # a history row
    for program in state.frontier:
        assert program.source.rstrip() in text
    assert INTERFACE_TEXT.rstrip() in text
    assert "+0.0213" in text and "-0.004" in text  # per-task deltas
    assert "1/1/1" in text  # W/T/L


def test_sections_in_order():
    text = render_prompt(small_state())
    headings = [
        "# Program search",
        "## Program interface",
        "## Constraints",
        "## Allowed imports and primitives",
        "## Research inspirations",
        "## History of every program so far",
        "## Frontier programs",
        "## Reply format",
    ]
    positions = [text.index(h) for h in headings]
    assert positions == sorted(positions)


def test_constraints_are_numbered():
    text = render_prompt(small_state())
    for i, (name, statement) in enumerate(CONSTRAINTS, start=1):
        assert f"{i}. {name}: {statement}" in text


def test_inspirations_named():
    text = render_prompt(small_state())
    for title in (
        "Rocchio",
        "MaxSim",
        "Cross-adapter",
        "Matryoshka",
        "substructure",
        "distribution",
    ):
        assert title in text
    assert len(PAPER_INSPIRATIONS) == 6


def test_rejected_reason_is_shown_truncated_and_escaped():
    text = render_prompt(small_state())
    row = next(line for line in text.splitlines() if line.startswith("| g0002 |"))
    assert "rejected" in row and "no-external-model" in row
    assert "\\|" in row  # a pipe inside the reason cannot break the table
    assert row.endswith("… |")


def test_reply_format_asks_for_the_header_and_one_python_block():
    text = render_prompt(small_state())
    tail = text[text.index("## Reply format") :]
    for label in ("Novelty:", "Hypothesis:", "Parent:", "Root-cause analysis:", "Forensics:"):
        assert label in tail
    assert "exactly ONE fenced ```python block" in tail


def test_top_k_limits_the_frontier_sources():
    state = small_state()
    assert G1_SOURCE.rstrip() not in render_prompt(state, top_k=0)
    assert "(no frontier program yet" in render_prompt(state, top_k=0)


def test_empty_history():
    state = SearchState(generation=1, history=(), frontier=(), tasks=("t",))
    text = render_prompt(state)
    assert "(no program has been evaluated yet)" in text
    assert "generation 1" in text


def test_primitive_modules_cover_the_package():
    found = {m.name for m in pkgutil.iter_modules(primitives_package.__path__)}
    assert found == set(PRIMITIVE_MODULES) | set(UNLISTED_MODULES)
    assert not set(PRIMITIVE_MODULES) & set(UNLISTED_MODULES)


def test_primitive_reference_lists_every_exported_name():
    import importlib

    reference = primitive_reference()
    for short in PRIMITIVE_MODULES:
        module = importlib.import_module(f"embedding_ttc.programs.primitives.{short}")
        for name in getattr(module, "__all__", ()):
            assert f"  {name}" in reference, (short, name)
    assert "  rrf(channels, *, mask=None, k=60, ties='average') — " in reference
    assert "  maxsim(Q, C, owner, n_docs, *, mask=None" in reference
    assert "    .fit(doc_texts) — " in reference  # BM25's classmethod, without cls
    assert "  _" not in reference  # nothing private
