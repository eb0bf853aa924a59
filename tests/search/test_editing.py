"""The edit proposer: search/replace blocks, parent choice, lessons, and a generation end to end.

Edits are applied to golden replies (clean, whitespace-shifted, fuzzy, failing); the proposer
talks to the canned OpenAI-compatible server, so its prompts and repair turns are what a real
backend would receive.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from embedding_ttc.program_files.parse import parse_reply
from embedding_ttc.programs.outcome import Status
from embedding_ttc.search.backends.openai_chat import OpenAIBackend
from embedding_ttc.search.lessons import lesson, lineage
from embedding_ttc.search.population import choose_parent
from embedding_ttc.search.precheck.check import PrecheckResult
from embedding_ttc.search.state import SearchState
from embedding_ttc.search.strategies.edit.blocks import (
    EditBlock,
    EditError,
    apply_blocks,
    parse_blocks,
)
from embedding_ttc.search.strategies.edit.prompt import render_edit_prompt
from embedding_ttc.search.strategies.edit.proposer import EditProposer
from ledger_records import evaluated

from .canned_server import CannedServer, Reply
from .test_prompt import G1_SOURCE, TASKS, small_state

REPO = Path(__file__).resolve().parents[2]

EDIT = """\
I will rank with both the column and the row z-score.

<<<<<<< SEARCH
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    return zscore_cols(S, mask)
=======
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    return zscore_cols(S, mask) + zscore_rows(S, mask)
>>>>>>> REPLACE

<<<<<<< SEARCH
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_cols
=======
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_cols, zscore_rows
>>>>>>> REPLACE

Novelty: adds the row z-score to the column z-score.
Hypothesis: a query's own scale matters as much as a document's hubness.
"""

EDITED_BODY = """\
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_cols, zscore_rows


def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    return zscore_cols(S, mask) + zscore_rows(S, mask)
"""


# --- blocks ------------------------------------------------------------------------------------


def test_blocks_are_parsed_in_order_with_loose_markers():
    reply = "```\n<<<<<<<< search\na\n=====\nb\n>>>>>>>> replace\n```\n" + EDIT
    blocks = parse_blocks(reply)
    assert blocks[0] == EditBlock("a\n", "b\n")
    assert len(blocks) == 3 and blocks[2].search.startswith("from embedding_ttc")


def test_a_clean_edit_applies_exactly():
    applied = apply_blocks(G1_SOURCE, parse_blocks(EDIT))
    assert applied.matches == ("exact", "exact") and applied.fuzzy == 0
    assert applied.source.endswith(EDITED_BODY)


def test_a_block_copied_with_another_indentation_is_reindented():
    block = EditBlock(
        "mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)\n"
        "return zscore_cols(S, mask)\n",
        "mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)\n"
        "return 2.0 * zscore_cols(S, mask)\n",
    )
    applied = apply_blocks(G1_SOURCE, [block])
    assert applied.matches == ("whitespace",)
    assert "    return 2.0 * zscore_cols(S, mask)\n" in applied.source
    ast.parse(applied.source)


def test_a_block_with_a_retyped_line_applies_by_fuzzy_match():
    block = EditBlock(
        "def program(Q, D, S, ctx):\n"
        "    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidate)\n"  # typo
        "    return zscore_cols(S, mask)\n",
        "def program(Q, D, S, ctx):\n"
        "    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)\n"
        "    return -zscore_cols(-S, mask)\n",
    )
    applied = apply_blocks(G1_SOURCE, [block])
    assert applied.matches == ("fuzzy",) and applied.fuzzy == 1
    assert "return -zscore_cols(-S, mask)" in applied.source
    assert "return zscore_cols(S, mask)" not in applied.source


def test_a_block_that_is_not_in_the_program_fails_with_the_closest_lines():
    block = EditBlock("    S = S - S.mean()\n    return S\n", "    return S\n")
    with pytest.raises(EditError, match=r"block 1: its SEARCH text is not in the program") as err:
        apply_blocks(G1_SOURCE, [block])
    assert "closest lines" in str(err.value)


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("no edit here", "holds no <<<<<<< SEARCH"),
        ("<<<<<<< SEARCH\n=======\nx = 1\n>>>>>>> REPLACE\n", "the SEARCH section is empty"),
        ("<<<<<<< SEARCH\na\n", "without a ======= divider"),
        ("<<<<<<< SEARCH\na\n=======\nb\n", "no >>>>>>> REPLACE line"),
    ],
)
def test_malformed_edits_are_refused_with_a_reason(reply, message):
    with pytest.raises(EditError, match=message):
        apply_blocks(G1_SOURCE, parse_blocks(reply))


def test_an_ambiguous_fuzzy_block_is_refused():
    source = "x = compute(a, b)\ny = 1\n\nx = compute(a, c)\ny = 1\n"
    block = EditBlock("x = compute(a, d)\ny = 1\n", "x = 0\ny = 1\n")
    with pytest.raises(EditError, match="matches several places"):
        apply_blocks(source, [block])


# --- lessons and parents ---------------------------------------------------------------------


def _lineage_state() -> SearchState:
    state = small_state()
    p0, g1, g2 = state.history
    g1 = g1.model_copy(update={"lesson": lesson(g1, p0)})
    g2 = g2.model_copy(update={"lesson": lesson(g2, g1)})
    g3 = evaluated(3, "g0003", dict.fromkeys(TASKS, 0.0), parent_id="g0000-P0", novelty="other")
    g3 = g3.model_copy(update={"lesson": lesson(g3, p0), "source_path": "programs/g0003.py"})
    return dataclasses.replace(state, history=(p0, g1, g2, g3), generation=4)


def test_a_lesson_says_what_changed_what_moved_and_what_was_expected():
    state = _lineage_state()
    g1, g2 = state.history[1], state.history[2]
    assert g1.lesson == (
        "g0001 from g0000-P0: removes document hubness with a per-column z-score.; "
        "mean Δ +0.0059 vs parent (+0.0059 vs P0); up AILAStatutes +0.021, "
        "down FinQARetrieval -0.004, 1 unmoved; "
        "expected: hub documents close to every query crowd the top ranks."
    )
    assert g2.lesson.startswith(
        "g0002 from g0001 tried: reads a cached index from disk; rejected: no-external-model"
    )
    assert len(g2.lesson) < 320


def test_lineage_is_the_ancestors_and_the_other_children_newest_first():
    state = _lineage_state()
    assert [r.program_id for r in lineage(state.history, "g0001")] == ["g0002", "g0001"]
    assert [r.program_id for r in lineage(state.history, "g0000-P0")] == ["g0003", "g0001"]


def test_the_parent_choice_is_seeded_and_explores_off_the_frontier():
    state = dataclasses.replace(_lineage_state(), read_source=lambda r: f"# {r.program_id}\n")
    picks = [choose_parent(dataclasses.replace(state, generation=g), seed=1) for g in range(40)]
    again = [choose_parent(dataclasses.replace(state, generation=g), seed=1) for g in range(40)]
    assert [p.record.program_id for p in picks] == [p.record.program_id for p in again]
    off = [p for p in picks if not p.on_frontier]
    assert 0 < len(off) < 20  # about one in five
    assert {p.record.program_id for p in off} == {"g0003"}  # evaluated, off the frontier
    assert all(p.source == "# g0003\n" for p in off)
    never = [choose_parent(dataclasses.replace(state, generation=g), seed=1, explore=0.0)
             for g in range(20)]  # fmt: skip
    assert all(p.on_frontier and p.record.program_id == "g0001" for p in never)


def test_the_edit_prompt_holds_the_parent_its_results_and_its_lessons():
    state = _lineage_state()
    parent = choose_parent(state, seed=0, explore=0.0)
    text = render_edit_prompt(state, parent)
    assert G1_SOURCE.rstrip() in text
    assert "| AILAStatutes | +0.0213 | +0.0000 | +0.0213 |" in text
    assert state.history[2].lesson in text and state.history[1].lesson in text
    assert "<<<<<<< SEARCH" in text and "Novelty:" in text
    assert text.index("Lessons") > text.index("task by task")
    with pytest.raises(ValueError, match="budget of 100 is too small"):
        render_edit_prompt(state, parent, context_tokens=100)


# --- the proposer ------------------------------------------------------------------------------


@pytest.fixture()
def server():
    with CannedServer() as canned:
        yield canned


def backend(server: CannedServer) -> OpenAIBackend:
    return OpenAIBackend(model="canned", base_url=server.openai_base_url, max_retries=0, timeout=10)


def _state() -> SearchState:
    return dataclasses.replace(_lineage_state(), read_source=lambda r: None)


def test_an_edit_becomes_a_proposal_whose_docstring_says_what_it_is(server):
    server.enqueue(Reply(EDIT, 500, 80))
    proposal = EditProposer(backend(server), explore=0.0).propose(_state())
    assert proposal.parent_id == "g0001" and proposal.proposer == "edit:openai"
    assert proposal.novelty == "adds the row z-score to the column z-score."
    assert proposal.source is not None and proposal.source.endswith(EDITED_BODY)
    doc = ast.get_docstring(ast.parse(proposal.source))
    assert doc is not None and "Parent: g0001" in doc
    assert parse_reply(f"```python\n{proposal.source}```").novelty == proposal.novelty
    assert proposal.attempts == () and proposal.usage.tokens_in == 500


def test_an_edit_that_does_not_apply_gets_one_repair_turn(server):
    bad = "<<<<<<< SEARCH\n    return S\n=======\n    return -S\n>>>>>>> REPLACE\nNovelty: x\n"
    server.enqueue(Reply(bad, 400, 30), Reply(EDIT, 600, 80))
    proposal = EditProposer(backend(server), explore=0.0).propose(_state())
    assert proposal.source is not None and proposal.source.endswith(EDITED_BODY)
    (attempt,) = proposal.attempts
    assert attempt.status == Status.REJECTED and attempt.reply == bad
    assert attempt.reason.startswith("edit: block 1: its SEARCH text is not in the program")
    repair = server.prompts[1]
    assert repair is not None and "could not be applied" in repair and G1_SOURCE.rstrip() in repair
    assert [m["role"] for m in server.requests[1].body["messages"]] == ["user", "assistant", "user"]


def test_an_edit_that_fails_the_precheck_is_repaired_on_the_edited_program(server):
    crash = EDIT.replace("zscore_cols(S, mask) + zscore_rows(S, mask)", "undefined_thing(S)")

    def check(source: str) -> PrecheckResult:
        if "undefined_thing" in source:
            reason = "NameError: name 'undefined_thing' is not defined"
            return PrecheckResult(False, Status.CRASHED, reason)
        return PrecheckResult(True, Status.OK)

    fix = (
        "<<<<<<< SEARCH\n    return undefined_thing(S)\n=======\n"
        "    return zscore_cols(S, mask) + zscore_rows(S, mask)\n>>>>>>> REPLACE\n"
        "Novelty: adds the row z-score to the column z-score.\n"
    )
    server.enqueue(Reply(crash), Reply(fix))
    proposal = EditProposer(backend(server), explore=0.0, precheck=check).propose(_state())
    assert proposal.source is not None and proposal.source.endswith(EDITED_BODY)
    assert proposal.attempts[0].status == Status.CRASHED
    repair = server.prompts[1]
    assert repair is not None and "failed the check" in repair and "undefined_thing(S)" in repair
    # The drafting proposer's one-line fix for a common failure comes with it.
    assert "Hint: undefined_thing is not defined: define it in the file, or use a listed" in repair


def test_when_no_edit_applies_the_proposal_has_no_program(server):
    bad = "I would rather rewrite everything."
    server.enqueue(Reply(bad), Reply(bad))
    proposal = EditProposer(backend(server), explore=0.0).propose(_state())
    assert proposal.source is None and len(proposal.attempts) == 1
    assert proposal.parent_id == "g0001"


# --- in the loop, and from the command line --------------------------------------------------


def test_in_the_loop_each_edit_leaves_a_lesson_the_next_prompt_shows(server, tmp_path):
    from embedding_ttc.runs.ledger import Ledger
    from embedding_ttc.search.loop import Budget, SearchLoop

    from .loop_fakes import FakeChecker, FakeEvaluator, FakeSandbox

    first = (
        "<<<<<<< SEARCH\n    return S.copy()\n=======\n    return S.cumsum(axis=1)\n"
        ">>>>>>> REPLACE\nNovelty: cumulative scores.\nHypothesis: the sum smooths ranks.\n"
    )
    second = (
        "<<<<<<< SEARCH\n    return S.cumsum(axis=1)\n=======\n    T = np.sort(S, axis=0)\n"
        "    return np.clip(T.cumsum(axis=0), 0.0, None).transpose().transpose()\n"
        ">>>>>>> REPLACE\nNovelty: sums down the columns.\nHypothesis: columns matter.\n"
    )
    server.enqueue(Reply(first), Reply(second))
    evaluator = FakeEvaluator({"g0001": 0.02, "g0002": -0.01})
    loop = SearchLoop(
        proposer=EditProposer(backend(server), explore=0.0),
        checker=FakeChecker(),
        sandbox=FakeSandbox(),
        evaluator=evaluator,
        ledger=Ledger(tmp_path),
        clock=evaluator.clock,
        top_k=1,  # the frontier shown is its best program alone: the parent is known
    )
    loop.run(Budget(generations=2))
    _, g1, g2 = Ledger(tmp_path).records
    assert g1.parent_id == "g0000-P0" and g2.parent_id == "g0001"
    assert g1.lesson == (
        "g0001 from g0000-P0: cumulative scores.; mean Δ +0.0200 vs parent (+0.0200 vs P0); "
        "up alpha +0.020, beta +0.020; expected: the sum smooths ranks."
    )
    assert g2.lesson.startswith("g0002 from g0001: sums down the columns.; mean Δ -0.0300")
    second_prompt = server.prompts[1]
    assert second_prompt is not None and g1.lesson in second_prompt
    assert "return S.cumsum(axis=1)" in second_prompt  # the parent, as edited
    assert (tmp_path / "programs" / "g0002.py").read_text().count("np.sort(S, axis=0)") == 1


# --- a whole-program reply, seeds, and the format example ------------------------------------

WHOLE = """\
```python
<<<<<<< SEARCH
    lines copied EXACTLY from the program above (a few lines around the change)
=======
    the lines that replace them
>>>>>>> REPLACE
```
Novelty: ranks by the row z-score.

```python
from embedding_ttc.programs.primitives.scores import zscore_rows


def program(Q, D, S, ctx):
    return zscore_rows(S)
```
"""


def test_a_reply_with_a_whole_program_and_no_block_that_applies_is_that_program(server):
    server.enqueue(Reply(WHOLE, 300, 90))
    proposal = EditProposer(backend(server), explore=0.0).propose(_state())
    assert proposal.source is not None and proposal.attempts == ()
    assert proposal.source.endswith("def program(Q, D, S, ctx):\n    return zscore_rows(S)\n")
    doc = ast.get_docstring(ast.parse(proposal.source))
    assert doc is not None and "Edit: the reply's whole program (no block applied)" in doc


def test_a_whole_program_never_overrides_a_block_that_applies(server):
    server.enqueue(Reply(EDIT + "\n```python\ndef program(Q, D, S, ctx):\n    return -S\n```\n"))
    proposal = EditProposer(backend(server), explore=0.0).propose(_state())
    assert proposal.source is not None and proposal.source.endswith(EDITED_BODY)
    doc = ast.get_docstring(ast.parse(proposal.source))
    assert doc is not None and "Edit: 2 block(s) placed (exact, exact)" in doc


def _root_only_state() -> SearchState:
    from embedding_ttc.search.state import FrontierProgram

    from .structural_support import P0_SOURCE

    state = _state()
    return dataclasses.replace(state, frontier=(FrontierProgram(state.history[0], P0_SOURCE),))


def test_while_the_frontier_holds_only_p0_the_edit_starts_from_the_seed(server):
    from embedding_ttc.search.strategies.edit.seeds import SEEDS, seeds_for

    seeds = seeds_for("BM25DenseRRF")
    assert seeds == (("BM25DenseRRF", SEEDS["BM25DenseRRF"]),) and seeds_for("none") == ()
    parent = choose_parent(_root_only_state(), seed=3, seeds=seeds)
    assert parent.is_seed and parent.name == "BM25DenseRRF" and parent.record is None
    assert choose_parent(_state(), seed=3, seeds=seeds, explore=0.0).name == "g0001"

    edit = (
        "<<<<<<< SEARCH\n    return rrf([lexical, S], mask=mask)  # float32 (n_q, n_d)\n=======\n"
        "    return rrf([lexical, S, S], mask=mask)\n>>>>>>> REPLACE\n"
        "Novelty: counts the dense ranking twice.\nHypothesis: dense is the stronger channel.\n"
    )
    server.enqueue(Reply(edit))
    proposal = EditProposer(backend(server), explore=0.0, seeds=seeds).propose(_root_only_state())
    assert proposal.parent_id == "BM25DenseRRF"
    assert proposal.source is not None and "rrf([lexical, S, S], mask=mask)" in proposal.source
    prompt = server.prompts[0]
    assert prompt is not None and "The program to edit: BM25DenseRRF" in prompt
    assert SEEDS["BM25DenseRRF"].rstrip().splitlines()[-1] in prompt


def test_the_format_example_is_a_line_of_the_parent_with_another_comment():
    from embedding_ttc.search.novelty import structure
    from embedding_ttc.search.strategies.edit.prompt import EXAMPLE_COMMENT, FORMAT, format_example
    from embedding_ttc.search.strategies.edit.seeds import SEEDS

    source = SEEDS["BM25DenseRRF"]
    example = format_example(source)
    first = "    mask = mask_for(ctx, S)  # None, or (n_q, n_d) bool: each query's candidates\n"
    assert example == (
        f"<<<<<<< SEARCH\n{first}=======\n    mask = mask_for(ctx, S)  # {EXAMPLE_COMMENT}\n"
        ">>>>>>> REPLACE"
    )
    edited = apply_blocks(source, parse_blocks(example)).source
    assert edited != source and structure(edited) == structure(source)  # a copy is no novelty
    helper_after = source + "\n\ndef helper(x):\n    y = x + 1\n    return y\n"
    assert format_example(helper_after) == example  # a line of program(), not of a helper
    p0 = format_example("def program(Q, D, S, ctx):\n    return S.copy()\n")
    assert p0.endswith(f"=======\n    return S.copy()  # {EXAMPLE_COMMENT}\n>>>>>>> REPLACE")
    multi = "def program(Q, D, S, ctx):\n    return fuse(\n        [S], [1.0])\n"
    assert format_example(multi) == FORMAT
    assert format_example("x = 1\n") == FORMAT


def test_a_block_copied_with_another_comment_is_placed_by_its_code():
    from embedding_ttc.search.strategies.edit.seeds import SEEDS

    reply = (
        "<<<<<<< SEARCH\n    return rrf([lexical, S], mask=mask)  # the rescored matrix\n=======\n"
        "    return rrf([zscore_rows(lexical), S], mask=mask)\n>>>>>>> REPLACE\n"
    )
    edited = apply_blocks(SEEDS["BM25DenseRRF"], parse_blocks(reply))
    assert edited.matches == ("code",)
    assert edited.source.endswith("    return rrf([zscore_rows(lexical), S], mask=mask)\n")
    with pytest.raises(EditError, match="not in the program"):
        apply_blocks(
            SEEDS["BM25DenseRRF"],
            parse_blocks("<<<<<<< SEARCH\n# only\n=======\nx\n>>>>>>> REPLACE\n"),
        )


@pytest.mark.parametrize("with_candidates", [False, True])
def test_every_seed_passes_the_checks_and_scores_as_its_library_program(tiny_task, with_candidates):
    import numpy as np

    from embedding_ttc.program_files.checks.source import check_source
    from embedding_ttc.program_files.sandbox.limits import SandboxLimits
    from embedding_ttc.program_files.sandbox.program import SandboxedProgram
    from embedding_ttc.programs.catalog import get_program
    from embedding_ttc.search.strategies.edit.seeds import SEEDS

    from fakes import HashingEncoder
    from library_support import direct_call

    candidates = [np.array([0, 1, 4]), np.array([2, 3]), np.array([4, 0, 1])]
    Q, D, S, ctx, _ = direct_call(
        tiny_task, HashingEncoder(), candidates if with_candidates else None
    )
    for name, source in SEEDS.items():
        check_source(source, task_names=[tiny_task.name])
        limits = SandboxLimits(wall_seconds=30.0, memory_bytes=2 * 2**30)
        seeded = SandboxedProgram(source, f"seed-{name}", limits)(Q, D, S, ctx)
        np.testing.assert_allclose(seeded, get_program(name)(Q, D, S, ctx), rtol=0, atol=1e-6)


# --- replies of the 1.5B model's first runs ---------------------------------------------------

HEADINGS = """\
### SEARCH
```python
    return rrf([lexical, S], mask=mask)  # float32 (n_q, n_d)
```

### REPLACE
```python
    return rrf([lexical, S, S], mask=mask)  # the rescored matrix
```

### Novelty: counts the dense ranking twice
"""


def test_pairs_written_as_markdown_headings_over_fences_are_blocks():
    from embedding_ttc.search.strategies.edit.seeds import SEEDS

    blocks = parse_blocks(HEADINGS)
    assert blocks == [
        EditBlock(
            "    return rrf([lexical, S], mask=mask)  # float32 (n_q, n_d)\n",
            "    return rrf([lexical, S, S], mask=mask)  # the rescored matrix\n",
        )
    ]
    edited = apply_blocks(SEEDS["BM25DenseRRF"], blocks).source
    assert "return rrf([lexical, S, S], mask=mask)" in edited
    assert parse_blocks("**Search:**\n```\na\n```\nno replace heading\n```\nb\n```\n") == []
    assert parse_blocks("### REPLACE\n```\nb\n```\n### SEARCH\n```\na\n```\n") == []


def test_a_repeated_search_revises_the_earlier_blocks_change():
    from embedding_ttc.search.strategies.edit.seeds import SEEDS

    last = "    return rrf([lexical, S], mask=mask)  # float32 (n_q, n_d)\n"
    reply = (
        f"<<<<<<< SEARCH\n{last}=======\n    return rrf([S], mask=mask)\n>>>>>>> REPLACE\n"
        f"<<<<<<< SEARCH\n{last}=======\n"
        "    return rrf([S, lexical, S], mask=mask)\n>>>>>>> REPLACE\n"
    )
    edited = apply_blocks(SEEDS["BM25DenseRRF"], parse_blocks(reply))
    assert edited.source.endswith("    return rrf([S, lexical, S], mask=mask)\n")
    assert "rrf([S], mask=mask)" not in edited.source and edited.matches == ("exact", "exact")


def test_a_generation_without_a_program_keeps_the_reason_and_the_last_reply(server, tmp_path):
    from embedding_ttc.runs.ledger import Ledger
    from embedding_ttc.search.loop import Budget, SearchLoop

    from .loop_fakes import FakeChecker, FakeEvaluator, FakeSandbox

    bad = "<<<<<<< SEARCH\n    return nothing_like_this\n=======\n    return S\n>>>>>>> REPLACE\n"
    server.enqueue(Reply(bad), Reply(bad + "\nstill wrong"))
    evaluator = FakeEvaluator({})
    loop = SearchLoop(
        proposer=EditProposer(backend(server), explore=0.0),
        checker=FakeChecker(),
        sandbox=FakeSandbox(),
        evaluator=evaluator,
        ledger=Ledger(tmp_path),
        clock=evaluator.clock,
    )
    loop.run(Budget(generations=1))
    _, g1 = Ledger(tmp_path).records
    assert g1.status == Status.REJECTED
    assert g1.reason.startswith("edit: block 1: its SEARCH text is not in the program")
    assert g1.reply == bad + "\nstill wrong" and g1.attempts[0]["reply"] == bad


def test_an_edit_using_a_helper_it_did_not_import_gets_the_import(server):
    from embedding_ttc.search.strategies.edit.seeds import seeds_for

    edit = (
        "<<<<<<< SEARCH\n    return rrf([lexical, S], mask=mask)  # float32 (n_q, n_d)\n=======\n"
        "    return rrf([zscore_rows(lexical), S], mask=mask)\n>>>>>>> REPLACE\n"
        "Novelty: z-scores BM25 per query first.\n"
    )
    server.enqueue(Reply(edit))
    seeds = seeds_for("BM25DenseRRF")
    proposal = EditProposer(backend(server), explore=0.0, seeds=seeds).propose(_root_only_state())
    assert proposal.source is not None and proposal.attempts == ()
    tree = ast.parse(proposal.source)
    imported = {a.name for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names}
    assert "zscore_rows" in imported


def test_a_copy_of_the_seed_is_a_near_duplicate_of_it():
    from embedding_ttc.search.novelty import closest, structure
    from embedding_ttc.search.strategies.edit.seeds import SEEDS, seed_structures

    registered = seed_structures("BM25DenseRRF")
    assert list(registered) == ["seed:BM25DenseRRF"] and seed_structures(None) == {}
    copy = SEEDS["BM25DenseRRF"].replace("# float32 (n_q, n_d)", "# the rescored matrix")
    near = closest(structure(copy), registered)
    assert near.duplicate and near.name == "seed:BM25DenseRRF"


# --- the suggested idea -----------------------------------------------------------------------


def test_the_suggested_idea_is_one_the_parent_lacks_least_named_by_its_children():
    from embedding_ttc.search.prompts.inspirations import INSPIRATIONS
    from embedding_ttc.search.strategies.edit.seeds import SEEDS
    from embedding_ttc.search.strategies.edit.suggest import idea_helpers, realised, suggest_idea

    seed = SEEDS["BM25DenseRRF"]
    by_key = {i.key: i for i in INSPIRATIONS}
    assert idea_helpers(by_key["lexical"]) == {"bm25_scores", "query_term_coverage"}
    assert idea_helpers(by_key["rocchio"]) == {"prf_scores"}  # fuse is no idea's mark
    assert realised(by_key["lexical"], seed) and not realised(by_key["rocchio"], seed)
    state = _root_only_state()
    chosen = {suggest_idea(dataclasses.replace(state, generation=g), "BM25DenseRRF", seed)
              for g in range(40)}  # fmt: skip
    assert None not in chosen and by_key["lexical"] not in chosen  # the seed has BM25 already
    assert len(chosen) == 6  # the rotation reaches every other idea
    collapsed = dataclasses.replace(state, views_collapsed=True)
    assert all(
        suggest_idea(dataclasses.replace(collapsed, generation=g), "BM25DenseRRF", seed)
        is not by_key["views"]
        for g in range(40)
    )
    # An idea the parent's children already claim comes after those they do not.
    first = suggest_idea(state, "BM25DenseRRF", seed)
    assert first is not None
    child = state.history[-1].model_copy(
        update={"parent_id": "BM25DenseRRF", "novelty": f"adds {first.keywords[0]}"}
    )
    tried = dataclasses.replace(state, history=(*state.history, child))
    assert suggest_idea(tried, "BM25DenseRRF", seed) not in (first, None)
    # A parent that realises every idea gets none.
    everything = seed + "".join(f"\n# {h}(x)" for i in INSPIRATIONS for h in idea_helpers(i))
    assert suggest_idea(state, "BM25DenseRRF", everything) is None


def test_the_edit_prompt_names_the_idea_and_the_proposal_falls_back_to_it(server):
    from embedding_ttc.search.strategies.edit.seeds import seeds_for

    seeds = seeds_for("BM25DenseRRF")
    edit = (
        "<<<<<<< SEARCH\n    return rrf([lexical, S], mask)  # float32 (n_q, n_d)\n=======\n"
        "    return rrf([lexical, S, prf_scores(Q, D, S, k=5, alpha=0.5, mask=mask)], mask)\n"
        ">>>>>>> REPLACE\n"
    )
    server.enqueue(Reply(edit), Reply(edit))
    proposer = EditProposer(backend(server), explore=0.0, seeds=seeds)
    proposal = proposer.propose(_root_only_state())
    prompt = server.prompts[0]
    assert prompt is not None and "## The idea to add: " in prompt
    title = prompt.split("## The idea to add: ")[1].splitlines()[0]
    assert f"Add the idea above ({title}) as ONE new channel" in prompt
    assert proposal.source is not None and f"adds {title} (the suggested idea)" in proposal.source
    plain = EditProposer(backend(server), explore=0.0, seeds=seeds, suggest=False)
    plain.propose(_root_only_state())
    assert "The idea to add" not in (server.prompts[1] or "")
