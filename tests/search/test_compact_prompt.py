"""The compact prompt: pinned by a golden file, within its budget, and its directives.

When a change to the compact prompt is intended, regenerate the golden file and review it:

    EMBEDDING_TTC_UPDATE_GOLDEN=1 .venv/bin/pytest tests/search/test_compact_prompt.py
    git diff tests/search/golden/compact_prompt.txt
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from embedding_ttc.program_files.checks.source import check_source
from embedding_ttc.program_files.contract import CONSTRAINTS
from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.records import LedgerRecord
from embedding_ttc.search.backends.base import estimate_tokens
from embedding_ttc.search.novelty import NOVELTY_THRESHOLD, similarity
from embedding_ttc.search.prompts.directives import Directive, choose_directive
from embedding_ttc.search.prompts.examples import EXAMPLES, example_structures
from embedding_ttc.search.prompts.helper_list import PRIMITIVE_PRIORITY, helper_modules
from embedding_ttc.search.prompts.inspirations import INSPIRATIONS
from embedding_ttc.search.prompts.small_model import (
    SHORT_CONSTRAINTS,
    abridge,
    render_compact_prompt,
)
from embedding_ttc.search.state import FrontierProgram, SearchState
from ledger_records import evaluated

from .test_prompt import G1_SOURCE, TASKS, small_state

GOLDEN = Path(__file__).parent / "golden" / "compact_prompt.txt"
UPDATE = os.environ.get("EMBEDDING_TTC_UPDATE_GOLDEN") == "1"


def words(text: str) -> int:
    """A counter unlike the default estimate (whitespace words), standing in for a tokenizer."""
    return len(text.split())


def record(generation: int, status: Status = Status.OK, **fields: object) -> LedgerRecord:
    program_id = f"g{generation:04d}"
    fields = {"proposer": "llama-cpp", **fields}
    if status == Status.OK:
        mean, cost = 0.001 * generation, 1.0 + generation / 10
        return evaluated(
            generation, program_id, dict.fromkeys(TASKS, mean), cost_ratio=cost, **fields
        )
    values: dict[str, object] = {
        "generation": generation,
        "program_id": program_id,
        "status": status,
        "reason": f"crashed: the program raised IndexError number {generation}",
    }
    values.update(fields)
    return LedgerRecord.model_validate(values)


def long_source(tag: int, lines: int = 60) -> str:
    body = "\n".join(f"    x{i} = S * {i + tag}  # step {i}" for i in range(lines))
    return (
        f'"""Program {tag}.\n\nNovelty: a long program.\n"""\n\nimport numpy as np\n\n\n'
        f"def program(Q, D, S, ctx):\n    # a comment\n{body}\n    return S.copy()\n"
    )


def big_state(generation: int = 41) -> SearchState:
    """Forty records (some failed) and five long frontier programs."""
    history = [record(0, novelty="the cosine baseline")]
    for g in range(1, generation):
        status = Status.OK if g % 3 else Status.CRASHED
        history.append(record(g, status, novelty=f"idea number {g} with a long description"))
    best = [r for r in history if r.status == Status.OK and r.generation > 0][-5:][::-1]
    frontier = [FrontierProgram(r, long_source(r.generation)) for r in best]
    return SearchState(
        generation=generation,
        history=tuple(history),
        frontier=tuple(frontier),
        tasks=TASKS,
        seed=3,
    )


def test_golden_compact_prompt():
    state = small_state()
    text = render_compact_prompt(state, context_tokens=3000, directive=choose_directive(state))
    if UPDATE:
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8")
    expected = GOLDEN.read_text(encoding="utf-8")
    assert text == expected, (
        "the compact prompt differs from tests/search/golden/compact_prompt.txt; if the change "
        "is intended, rerun with EMBEDDING_TTC_UPDATE_GOLDEN=1 and review the diff"
    )


@pytest.mark.parametrize("budget", [1500, 2000, 3000, 4500, 8000])
@pytest.mark.parametrize("counter", [None, words], ids=["estimate", "words"])
def test_budget_is_respected(budget, counter):
    state = big_state()
    text = render_compact_prompt(
        state, context_tokens=budget, directive=choose_directive(state), count_tokens=counter
    )
    assert (counter or estimate_tokens)(text) <= budget
    # The fixed sections are always there, whatever the budget.
    for heading in ("## Interface", "## Constraints", "## Helpers", "Example A", "Example B"):
        assert heading in text
    assert text.rstrip().endswith("Use only the helpers listed above, with the arguments shown.")


def test_a_larger_budget_shows_more():
    state = big_state()
    directive = choose_directive(state)
    small = render_compact_prompt(state, context_tokens=1800, directive=directive)
    large = render_compact_prompt(state, context_tokens=8000, directive=directive)
    assert len(large) > len(small)
    assert "## History" in large and "## Frontier programs" in large
    assert large.count("| g00") > small.count("| g00")


def test_a_budget_below_the_fixed_sections_is_an_error():
    state = small_state()
    with pytest.raises(ValueError, match="too small"):
        render_compact_prompt(state, context_tokens=500, directive=choose_directive(state))


def test_history_keeps_the_most_recent_rows():
    state = big_state()
    text = render_compact_prompt(state, context_tokens=2200, directive=choose_directive(state))
    rows = [line for line in text.splitlines() if line.startswith("| g0")]
    assert rows, text
    assert rows[-1].startswith("| g0040 |")  # the newest row is kept
    assert "| g0000-P0 |" not in text  # the oldest is cut first
    assert "the last" in text
    crashed = next(r for r in rows if "crashed" in r)
    note = crashed.split(" | ")[-1].removesuffix(" |")
    assert len(note) <= 60


def test_frontier_drops_docstrings_and_comments_then_the_least_good():
    state = big_state()
    directive = choose_directive(state)
    roomy = render_compact_prompt(state, context_tokens=8000, directive=directive)
    tight = render_compact_prompt(state, context_tokens=2400, directive=directive)
    frontier = roomy[roomy.index("## Frontier") : roomy.index("## History")]
    assert "# step" not in frontier and "a comment" not in frontier
    assert "Program 38." not in frontier  # the docstring
    assert "### g0038" in tight  # the best program stays...
    assert "### g0032" not in tight  # ...the least good goes first
    assert "### g0000-P0" not in roomy  # P0 is the baseline, never shown


def test_head_is_the_same_every_generation():
    """The run-constant sections come first, so llama.cpp reuses them from its KV cache."""
    a, b = big_state(20), big_state(41)
    text_a = render_compact_prompt(a, directive=choose_directive(a))
    text_b = render_compact_prompt(b, directive=choose_directive(b))
    head = text_a[: text_a.index("## Frontier")]
    assert text_b.startswith(head)
    assert "Example B" in head


def test_constraints_one_line_each_and_in_order():
    assert list(SHORT_CONSTRAINTS) == [name for name, _ in CONSTRAINTS]
    text = render_compact_prompt(small_state(), directive=choose_directive(small_state()))
    for i, (name, _) in enumerate(CONSTRAINTS, start=1):
        assert f"\n{i}. {name}: {SHORT_CONSTRAINTS[name]}\n" in text


def test_helpers_exist_and_are_imported_from_their_modules():
    modules = helper_modules()
    assert set(PRIMITIVE_PRIORITY) <= set(modules)  # no helper listed by name has vanished
    text = render_compact_prompt(small_state(), directive=choose_directive(small_state()))
    assert (
        "from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows" in text
    )
    assert f"from embedding_ttc.programs.primitives.{modules['maxsim']} import maxsim" in text


def test_examples_are_valid_and_different():
    assert len(EXAMPLES) == 2
    for example in EXAMPLES:
        check_source(example.source)
        assert "Novelty:" in example.source and "Hypothesis:" in example.source
    a, b = example_structures().values()
    assert similarity(a, b) < NOVELTY_THRESHOLD


def test_abridge_keeps_valid_code():
    out = abridge(G1_SOURCE)
    assert "Novelty" not in out and "def program(Q, D, S, ctx):" in out
    ast.parse(out)
    assert abridge("def program(Q, D, S, ctx)  # broken\n    return S\n").startswith("def program")


# ---------------------------------------------------------------------------------------------
# Directives


def empty_state(generation: int, seed: int = 0) -> SearchState:
    return SearchState(generation=generation, history=(), frontier=(), tasks=TASKS, seed=seed)


def test_directive_is_deterministic():
    assert choose_directive(big_state()) == choose_directive(big_state())
    assert isinstance(choose_directive(small_state()), Directive)


def test_successive_generations_explore_different_ideas():
    keys = [choose_directive(empty_state(g)).key for g in range(1, len(INSPIRATIONS) + 1)]
    assert len(set(keys)) == len(INSPIRATIONS)


def test_an_encoder_without_distinct_views_is_never_asked_for_view_channels():
    def key(g: int, seed: int, collapsed: bool) -> str:
        state = SearchState(
            generation=g,
            history=(),
            frontier=(),
            tasks=TASKS,
            seed=seed,
            views_collapsed=collapsed,
        )
        return choose_directive(state).key

    keys = {key(g, seed, True) for g in range(1, 30) for seed in (0, 1, 2)}
    assert "views" not in keys
    assert keys == {i.key for i in INSPIRATIONS} - {"views"}
    assert "views" in {key(g, 0, False) for g in range(1, 30)}


def test_once_every_idea_has_a_program_two_ideas_are_paired():
    history = [record(0, novelty="the cosine baseline")]
    history += [
        record(g, novelty=f"{idea.title} (this generation's directive)")
        for g, idea in enumerate(INSPIRATIONS, start=1)
    ]
    keys = set()
    for g in range(len(history), len(history) + 12):
        state = SearchState(generation=g, history=tuple(history), frontier=(), tasks=TASKS)
        directive = choose_directive(state)
        first, _, second = directive.key.partition("+")
        assert second and first != second, directive.key
        by_key = {i.key: i for i in INSPIRATIONS}
        assert by_key[first].instruction in directive.text
        assert by_key[second].instruction in directive.text
        keys.add(directive.key)
    assert len(keys) > 1  # the pairs rotate
    # One idea still without a program: it is asked for alone.
    state = SearchState(generation=20, history=tuple(history[:-1]), frontier=(), tasks=TASKS)
    assert choose_directive(state).key == INSPIRATIONS[-1].key


def test_the_seed_changes_the_order():
    orders = {
        tuple(choose_directive(empty_state(g, seed)).key for g in range(1, 4)) for seed in (0, 1)
    }
    assert len(orders) == 2


def test_ideas_tried_successfully_are_not_repeated():
    history = (
        record(0, novelty="the cosine baseline"),
        record(1, novelty="Rocchio feedback toward the top documents"),
    )
    for g in range(2, 12):
        if g % 3 == 0:
            continue
        state = SearchState(generation=g, history=history, frontier=(), tasks=TASKS)
        assert choose_directive(state).key != "rocchio"


def test_failed_attempts_push_an_idea_back():
    """A failed BM25 attempt: the next directives prefer ideas not yet attempted."""
    history = (
        record(0, novelty="the cosine baseline"),
        record(1, Status.CRASHED, novelty="bm25 lexical channel"),
    )
    chosen = {
        choose_directive(SearchState(generation=g, history=history, frontier=(), tasks=TASKS)).key
        for g in (2, 4, 5, 7, 8, 10)
    }
    assert "lexical" not in chosen


def test_combine_two_frontier_programs_every_third_generation():
    state = big_state(42)
    directive = choose_directive(state)
    assert directive.key == "combine"
    assert len(directive.parents) == 2
    assert all(p in directive.text for p in directive.parents)
    assert choose_directive(big_state(43)).key != "combine"
    # Without two programs beside P0 there is nothing to combine.
    assert choose_directive(empty_state(42)).key != "combine"


def test_directive_is_the_last_section():
    state = small_state()
    directive = choose_directive(state)
    text = render_compact_prompt(state, directive=directive)
    assert text.index(directive.text) > text.index("## History")
    assert f"(generation {state.generation})" in text
