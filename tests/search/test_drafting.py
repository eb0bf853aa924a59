"""The drafting proposer through the canned server: repair, best-of-N, attempts and usage, and
two generations of the real loop on a real task.

The chat backend is the OpenAI-compatible proposer talking to ``canned_server.py``; the
pre-check runs the real sandbox with the seeded fake encoder (the end-to-end test uses the
packaged ``tokenlearn-static-64`` encoder for both the pre-check and the evaluation).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from embedding_ttc.encoders.catalog import load_encoder
from embedding_ttc.program_files.checks.source import check_source
from embedding_ttc.program_files.sandbox.limits import SandboxLimits
from embedding_ttc.program_files.sandbox.program import SandboxedProgram
from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.ledger import Ledger
from embedding_ttc.search.backends.anthropic_chat import AnthropicBackend
from embedding_ttc.search.backends.base import ChatBackend, price_usd
from embedding_ttc.search.backends.llama_cpp import LlamaCppBackend
from embedding_ttc.search.backends.openai_chat import OpenAIBackend
from embedding_ttc.search.evaluator import SuiteEvaluator
from embedding_ttc.search.loop import Budget, SearchLoop
from embedding_ttc.search.novelty import library_structures
from embedding_ttc.search.precheck.check import (
    PrecheckResult,
    ledger_precheck,
    precheck,
    precheck_limits,
)
from embedding_ttc.search.precheck.hints import repair_hint
from embedding_ttc.search.precheck.repairs import (
    close_docstring,
    define_constants,
    drop_rrf_weights,
    drop_unused_typing,
    fix_imports,
    hoist_assignments,
    move_into_program,
    repair_source,
)
from embedding_ttc.search.prompts.directives import choose_directive
from embedding_ttc.search.prompts.examples import example_structures
from embedding_ttc.search.prompts.full import render_prompt
from embedding_ttc.search.proposer import ProposerError
from embedding_ttc.search.strategies.draft.proposer import DraftingProposer
from embedding_ttc.tasks.catalog import load_task

from .canned_server import CannedServer, Reply, http_error
from .test_prompt import small_state
from .test_proposers import FakeLlama, fake_llama_cpp  # noqa: F401 (a fixture)
from fakes import HashingEncoder

LIMITS = precheck_limits(SandboxLimits(wall_seconds=600, memory_bytes=2 * 2**30))


def fence(code: str) -> str:
    return f"Here is the program.\n\n```python\n{code}```\n"


BROKEN = '''\
"""Novelty: standardises S twice.
Hypothesis: double standardisation removes hubs."""
import numpy as np


def program(Q, D, S, ctx):
    return zscore(S)
'''

BROKEN_SHAPE = """\
import numpy as np


def program(Q, D, S, ctx):
    return S[:, :2].copy()
"""

FIXED = '''\
"""Novelty: adds the column z-score of S to its row z-score.
Hypothesis: removing hubs and query difficulty together helps every task."""
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_cols, zscore_rows


def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    return (zscore_rows(S, mask) + 0.3 * zscore_cols(S, mask)).astype("float32")
'''

OTHER = '''\
"""Novelty: squares the cosine of the best half of the dimensions.
Hypothesis: a sharper score separates near ties."""
import numpy as np


def program(Q, D, S, ctx):
    half = Q.shape[1] // 2
    Qh = Q[:, :half] / (np.linalg.norm(Q[:, :half], axis=1, keepdims=True) + 1e-6)
    Dh = D[:, :half] / (np.linalg.norm(D[:, :half], axis=1, keepdims=True) + 1e-6)
    coarse = Qh @ Dh.T
    return (S + 0.5 * coarse * np.abs(coarse)).astype(np.float32)
'''


@pytest.fixture(scope="module")
def check():
    encoder = HashingEncoder(dim=32, seed=0)
    registered = {**library_structures(), **example_structures()}

    def run(source: str) -> PrecheckResult:
        return precheck(
            source,
            checker=check_source,
            registered=registered,
            sandbox_factory=lambda src, name: SandboxedProgram(src, name, LIMITS),
            encoder=encoder,
        )

    return run


@pytest.fixture()
def server():
    with CannedServer() as canned:
        yield canned


def backend(server: CannedServer, seed: int = 0) -> OpenAIBackend:
    return OpenAIBackend(
        model="canned", base_url=server.openai_base_url, max_retries=0, timeout=10, seed=seed
    )


@pytest.mark.usefixtures("fake_llama_cpp")
def test_every_llm_backend_has_the_chat_seam(server, tmp_path):
    messages = [
        {"role": "user", "content": "write a program"},
        {"role": "assistant", "content": "draft"},
        {"role": "user", "content": "fix it"},
    ]
    server.enqueue(Reply("openai says hi", 11, 3), Reply("anthropic says hi", 12, 4))
    openai = backend(server)
    anthropic = AnthropicBackend(base_url=server.url, max_retries=0)
    for chat_backend, text in ((openai, "openai says hi"), (anthropic, "anthropic says hi")):
        assert isinstance(chat_backend, ChatBackend)
        reply = chat_backend.chat(messages, seed=42)
        assert reply.text == text and reply.usage.tokens_in > 0
    assert [r.body["messages"] for r in server.requests] == [messages, messages]
    assert server.requests[0].body["seed"] == 42
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF")
    llama = LlamaCppBackend(path, seed=1)
    assert isinstance(llama, ChatBackend)
    reply = llama.chat(messages, seed=42)
    (fake,) = FakeLlama.instances
    assert fake.calls[0]["messages"] == messages and fake.calls[0]["seed"] == 42
    prompt_words = sum(len(m["content"].split()) for m in messages)
    assert reply.usage.tokens_in == prompt_words and llama.count_tokens("a b c") == 3


def test_a_broken_draft_is_repaired(server, check):
    server.enqueue(Reply(fence(BROKEN), 100, 40), Reply(fence(FIXED), 300, 50))
    proposer = DraftingProposer(backend(server), drafts=1, repair_rounds=1, precheck=check)
    state = small_state()
    proposal = proposer.propose(state)
    assert proposal.source == FIXED
    assert proposal.novelty.startswith("adds the column z-score")
    (attempt,) = proposal.attempts
    assert attempt.status == Status.CRASHED
    assert attempt.reason.startswith("draft 1: synthetic task (full corpus")
    assert "NameError: name 'zscore' is not defined" in attempt.reason
    assert (attempt.tokens_in, attempt.tokens_out) == (100, 40)
    assert attempt.reply == fence(BROKEN)
    first, repair = server.requests
    assert [m["role"] for m in repair.body["messages"]] == ["user", "assistant", "user"]
    assert repair.body["messages"][0] == first.body["messages"][0]  # the same prompt
    assert repair.body["messages"][1]["content"] == fence(BROKEN)


def test_the_repair_prompt_holds_the_error_traceback_and_program(server, check):
    server.enqueue(Reply(fence(BROKEN)), Reply(fence(FIXED)))
    DraftingProposer(backend(server), drafts=1, repair_rounds=1, precheck=check).propose(
        small_state()
    )
    text = server.prompts[1]
    assert text is not None
    assert "NameError: name 'zscore' is not defined" in text
    assert "Traceback (innermost last):" in text and "return zscore(S)" in text
    assert BROKEN.rstrip() in text
    assert "Fix this program; return the whole file" in text


def test_all_drafts_fail_and_the_last_draft_is_returned(server, check):
    replies = [fence(BROKEN), fence(BROKEN_SHAPE), fence(BROKEN), fence(BROKEN_SHAPE)]
    server.enqueue(*(Reply(r) for r in replies))
    proposer = DraftingProposer(backend(server), drafts=2, repair_rounds=1, precheck=check)
    proposal = proposer.propose(small_state())
    assert proposal.source == BROKEN_SHAPE  # the last draft, for the loop to judge
    assert proposal.raw_reply == replies[-1]
    # Every call but the returned one is an attempt (the loop adds the proposal's own usage).
    assert len(proposal.attempts) == len(replies) - 1
    assert [a.reason.split(":")[0] for a in proposal.attempts] == [
        "draft 1",
        "draft 1 repair 1",
        "draft 2",
    ]
    assert [a.status for a in proposal.attempts] == [
        Status.CRASHED,
        Status.INVALID_OUTPUT,
        Status.CRASHED,
    ]


def test_best_of_n_returns_the_first_passing_draft(server, check):
    server.enqueue(Reply(fence(BROKEN)), Reply(fence(FIXED)), Reply(fence(OTHER)))
    proposer = DraftingProposer(backend(server, seed=5), drafts=3, repair_rounds=0, precheck=check)
    proposal = proposer.propose(small_state())
    assert proposal.source == FIXED
    assert len(proposal.attempts) == 1
    assert server.pending == 1  # the third draft was never asked for
    # Each draft is a fresh conversation with its own seed; the first keeps seed + generation.
    seeds = [r.body["seed"] for r in server.requests]
    assert seeds[0] == 5 + small_state().generation and len(set(seeds)) == 2
    assert all(len(r.body["messages"]) == 1 for r in server.requests)


def test_usage_is_summed_over_every_call(server, check):
    model = "gpt-4o-mini"  # a priced model, so the cost adds up too
    calls = [(1000, 200), (1500, 300), (1800, 250)]
    texts = [fence(BROKEN), fence(BROKEN_SHAPE), fence(FIXED)]
    server.enqueue(*(Reply(t, i, o, model=model) for t, (i, o) in zip(texts, calls, strict=True)))
    proposer = DraftingProposer(backend(server), drafts=2, repair_rounds=1, precheck=check)
    proposal = proposer.propose(small_state())
    assert proposal.source == FIXED
    total_in = proposal.usage.tokens_in + sum(a.tokens_in for a in proposal.attempts)
    total_out = proposal.usage.tokens_out + sum(a.tokens_out for a in proposal.attempts)
    assert (total_in, total_out) == (4300, 750)
    expected_cost = sum(price_usd(model, i, o) for i, o in calls)
    assert proposal.usage.cost_usd == pytest.approx(expected_cost)
    seconds = proposal.usage.seconds + sum(a.seconds for a in proposal.attempts)
    assert seconds > 0


def test_a_failed_call_is_an_attempt_and_drafting_goes_on(server, check):
    server.enqueue(http_error(500, "model overloaded"), Reply(fence(FIXED)))
    proposer = DraftingProposer(backend(server), drafts=2, repair_rounds=1, precheck=check)
    proposal = proposer.propose(small_state())
    assert proposal.source == FIXED
    (attempt,) = proposal.attempts
    assert attempt.status == Status.PROPOSER_ERROR and "model overloaded" in attempt.reason


def test_every_call_failing_is_a_proposer_error(server, check):
    server.enqueue(http_error(500, "down"), http_error(500, "still down"))
    proposer = DraftingProposer(backend(server), drafts=2, repair_rounds=1, precheck=check)
    with pytest.raises(ProposerError, match="every call failed") as caught:
        proposer.propose(small_state())
    assert caught.value.usage is not None and caught.value.usage.seconds > 0


def test_without_precheck_only_parsing_counts(server):
    server.enqueue(Reply("I would rather explain the idea in prose."), Reply(fence(BROKEN)))
    proposer = DraftingProposer(backend(server), drafts=1, repair_rounds=1, precheck=None)
    proposal = proposer.propose(small_state())
    assert proposal.source == BROKEN  # it runs badly, but that is the loop's to find out
    (attempt,) = proposal.attempts
    assert attempt.reason == "draft 1: parse: the reply contains no program"
    assert "contained no program" in (server.prompts[1] or "")


def test_missing_claims_come_from_the_directive(server):
    bare = "def program(Q, D, S, ctx):\n    return S * 2.0\n"
    server.enqueue(Reply(fence(bare)))
    state = small_state()
    proposal = DraftingProposer(backend(server), drafts=1, repair_rounds=0).propose(state)
    directive = choose_directive(state)
    assert (proposal.novelty, proposal.hypothesis) == (directive.novelty, directive.hypothesis)


def test_the_prompt_holds_the_directive_in_either_style(server):
    state = small_state()
    directive = choose_directive(state)
    server.enqueue(Reply(fence(FIXED)), Reply(fence(FIXED)))
    DraftingProposer(backend(server), drafts=1, repair_rounds=0, prompt="compact").propose(state)
    DraftingProposer(backend(server), drafts=1, repair_rounds=0, prompt="full").propose(state)
    compact, full = server.prompts
    assert compact is not None and full is not None
    assert directive.text in compact and "## Helpers" in compact
    assert full.startswith(render_prompt(state)) and directive.text in full


MISPLACED = '''\
"""Novelty: the best sentence of each document, fused with S."""
from embedding_ttc.programs.primitives.scores import candidate_mask, maxsim
from embedding_ttc.programs.primitives.chunking import chunk_documents, split_sentences


def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    chunks = chunk_documents(ctx.doc_texts, split_sentences, max_chunks_per_doc=4)
    with ctx.index_time():
        C = ctx.encode_fn(chunks.texts, view="retrieval.passage")
    best = maxsim(Q, C, chunks.owner, len(ctx.doc_texts), mask=mask)
    return (zscore_rows(S, mask) + zscore_rows(best, mask)).astype(np.float32)
'''


def test_fix_imports_moves_and_adds_helper_imports():
    fixed, notes = fix_imports(MISPLACED)
    assert notes == (
        "maxsim is imported from embedding_ttc.programs.primitives.late",
        "added: import numpy as np",
        "added: from embedding_ttc.programs.primitives.scores import zscore_rows",
    )
    lines = fixed.splitlines()
    assert lines[0].startswith('"""Novelty')  # the docstring stays first
    assert lines[1:3] == [
        "import numpy as np",
        "from embedding_ttc.programs.primitives.scores import zscore_rows",
    ]
    assert "from embedding_ttc.programs.primitives.scores import candidate_mask" in lines
    assert "from embedding_ttc.programs.primitives.late import maxsim" in lines
    check_source(fixed)
    assert fix_imports(fixed) == (fixed, ())  # nothing left to fix
    assert fix_imports(FIXED) == (FIXED, ())
    assert fix_imports("def program(Q, D, S, ctx)\n") == ("def program(Q, D, S, ctx)\n", ())


def test_fixed_imports_save_a_repair_call(server, check):
    server.enqueue(*(Reply(fence(MISPLACED)) for _ in range(3)))
    on = DraftingProposer(backend(server), drafts=1, repair_rounds=1, precheck=check)
    proposal = on.propose(small_state())
    assert proposal.attempts == () and proposal.source is not None
    assert "primitives.late import maxsim" in proposal.source
    off = DraftingProposer(
        backend(server), drafts=1, repair_rounds=1, precheck=check, fix_imports=False
    )
    proposal = off.propose(small_state())
    assert proposal.source == MISPLACED
    (attempt,) = proposal.attempts
    assert "cannot import name 'maxsim'" in attempt.reason
    assert "primitives.late import maxsim" in (server.prompts[-1] or "")  # the hint
    assert server.pending == 0


def test_repair_hints():
    undefined = PrecheckResult(
        False, Status.CRASHED, "x: NameError: name 'zscore_rows' is not defined"
    )
    assert "from embedding_ttc.programs.primitives.scores import zscore_rows" in repair_hint(
        undefined
    )
    wrong = PrecheckResult(
        False,
        Status.REJECTED,
        "cannot import name 'maxsim' from 'embedding_ttc.programs.primitives.scores'",
    )
    assert "primitives.late import maxsim" in repair_hint(wrong)
    shape = PrecheckResult(False, Status.INVALID_OUTPUT, "returned shape (5, 3), expected (5, 12)")
    assert "S.shape" in repair_hint(shape)
    assert repair_hint(PrecheckResult(False, Status.TIMEOUT, "too slow")) == ""


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        # The errors the 1.5B model made in the measured runs, as the sandbox reports them.
        (
            "TypeError: maxsim() missing 1 required positional argument: 'n_docs'",
            "call it exactly as listed: maxsim(Q, C, owner, n_docs, *, mask=None",
        ),
        (
            "TypeError: chunk_scores() got an unexpected keyword argument 'granularity'",
            "chunk_scores(Q, ctx, unit='sentence', reduce='max', mask=None) -> (n_q, n_d) "
            "(from embedding_ttc.programs.primitives.channels)",
        ),
        (
            "TypeError: texts must be a sequence of strings, not a single string",
            "ctx.encode_fn takes a list of strings",
        ),
        ("TypeError: texts must be strings, got ndarray", "not arrays"),
        ("TypeError: 'Chunks' object is not iterable", "chunks.texts (list of str)"),
        ("ValueError: shapes (5,384) and (12,384) not aligned", "Q @ D.T"),
        ("ValueError: operands could not be broadcast together", "[:, None]"),
        ("novel: near-duplicate of g0001 (similarity 0.978)", "add one more kind of evidence"),
        ("UnknownNameError: unknown view 'passkey'. Views: retrieval.query", "task names are"),
        ("ValueError: owner must be an integer array of shape (12,)", "chunk_scores(Q, ctx"),
        (
            "IndexError: arrays used as indices must be of integer (or boolean) type",
            "D[top[i]] are its best documents",
        ),
        ("ValueError: rows must be 1-D integer indices in [0, 5)", "soft_centroid_query(Q, D"),
        (
            "ValueError: pos_centroid of shape (12, 5) does not broadcast to (5, 12)",
            "updates ONE query vector",
        ),
        (
            "ValueError: channels differ in shape: [(5, 12), (12, 12)]",
            "D @ D.T is (n_d, n_d)",
        ),
        (
            "TypeError: only 0-dimensional arrays can be converted to Python scalars",
            "weights and constants are plain numbers",
        ),
        ("NameError: name 'ALPHA' is not defined", "at module level, after the imports: ALPHA"),
    ],
)
def test_repair_hints_for_misused_helpers(reason, expected):
    assert expected in repair_hint(PrecheckResult(False, Status.CRASHED, f"synthetic: {reason}"))


def test_a_hint_moves_code_that_uses_the_arguments_into_the_function():
    check = PrecheckResult(False, Status.CRASHED, "NameError: name 'Q' is not defined")
    assert "into the function body" in repair_hint(check)


UNCLOSED = '''"""Novelty: a prefix channel
fused with S.
Hypothesis: coarse and fine agree on relevant documents.
import numpy as np
from embedding_ttc.programs.primitives.channels import fuse, prefix_scores

DIMS = 64


def program(Q, D, S, ctx):
    """Fuse."""
    return fuse([S, prefix_scores(Q, D, DIMS)], [1.0, 0.5])
'''


def test_an_unclosed_docstring_is_closed_after_its_claims():
    fixed, notes = close_docstring(UNCLOSED)
    assert notes == ("closed the module docstring after line 3",)
    assert ast.get_docstring(ast.parse(fixed)) == (
        "Novelty: a prefix channel\nfused with S.\n"
        "Hypothesis: coarse and fine agree on relevant documents."
    )
    assert fixed.split("\n")[3:] == UNCLOSED.split("\n")[3:]
    assert close_docstring(fixed) == (fixed, ())  # a source that parses is left alone
    hopeless = '"""Novelty: x\ndef program(Q, D, S, ctx):\n    return S(\n'
    assert close_docstring(hopeless) == (hopeless, ())


MODULE_LEVEL = '''"""Novelty: a prefix channel.
Hypothesis: coarse and fine agree."""
from embedding_ttc.programs.primitives.channels import fuse, prefix_scores
from embedding_ttc.programs.primitives.scores import candidate_mask

W = 0.5
P = prefix_scores(Q, D, Q.shape[1] // 4)
B = P * W


def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    out = fuse([S, B], [1.0, 1.0], mask)
    return out
'''


def test_module_level_uses_of_the_arguments_move_into_program():
    fixed, notes = move_into_program(MODULE_LEVEL)
    assert notes == ("moved the module-level computation of B, P into program()",)
    body = fixed.split("def program(Q, D, S, ctx):\n")[1].split("\n")
    assert body[:4] == [
        "    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)",
        "    P = prefix_scores(Q, D, Q.shape[1] // 4)",
        "    B = P * W",
        "    out = fuse([S, B], [1.0, 1.0], mask)",
    ]
    assert "W = 0.5" in fixed.split("def program")[0]  # constants stay at module level
    assert move_into_program(fixed) == (fixed, ())
    assert move_into_program("def helper():\n    pass\n") == ("def helper():\n    pass\n", ())


def test_a_draft_that_does_not_parse_gets_a_fresh_draft_not_a_repair(server, check):
    server.enqueue(Reply(fence("def program(Q, D, S, ctx):\n    return (S\n"), 100, 40))
    server.enqueue(Reply(fence(FIXED), 300, 50))
    proposer = DraftingProposer(backend(server), drafts=2, repair_rounds=1, precheck=check)
    proposal = proposer.propose(small_state())
    assert proposal.source == FIXED
    assert [a.reason.split(":")[0] for a in proposal.attempts] == ["draft 1"]
    second = server.requests[1].body["messages"]
    assert [m["role"] for m in second] == ["user"]  # a new conversation, not a repair turn


def test_an_unused_typing_import_is_dropped():
    source = (
        "from typing import *\nimport numpy as np\n\n\ndef program(Q, D, S, ctx):\n    return S\n"
    )
    fixed, notes = drop_unused_typing(source)
    assert fixed.startswith("import numpy as np") and notes
    used = "from typing import List\n\n\ndef program(Q, D, S, ctx) -> List:\n    return S\n"
    assert drop_unused_typing(used) == (used, ())
    dotted = "import typing\n\n\ndef program(Q, D, S, ctx) -> typing.Any:\n    return S\n"
    assert drop_unused_typing(dotted) == (dotted, ())


def test_no_signature_hint_for_a_function_that_is_not_a_helper():
    check = PrecheckResult(False, Status.CRASHED, "TypeError: helper() missing 1 required")
    assert repair_hint(check) == ""


def test_invalid_settings():
    from embedding_ttc.search.strategies.base import StrategyError
    from embedding_ttc.search.strategies.draft import DraftOptions

    with pytest.raises(StrategyError, match="drafts must be at least 1, not 0"):
        DraftOptions(drafts=0)
    with pytest.raises(StrategyError, match="repair_rounds must be at least 0, not -1"):
        DraftOptions(repair_rounds=-1)
    with pytest.raises(ValueError, match="prompt must be"):
        DraftingProposer(object(), prompt="tiny")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# The CLI's defaults


# ---------------------------------------------------------------------------------------------
# End to end


def test_two_generations_of_the_loop_record_the_attempts(tmp_path: Path, packaged_datasets):
    encoder = load_encoder("tokenlearn-static-64")
    task = load_task("aila_statutes", packaged_datasets)
    ledger = Ledger(tmp_path)
    library = library_structures()

    def checker(source: str) -> object:
        return check_source(source, task_names={task.name})

    check = ledger_precheck(checker, library, ledger, LIMITS, encoder)
    replies = [
        Reply(fence(BROKEN), 900, 100),  # generation 1: fails the pre-check...
        Reply(fence(FIXED), 1000, 120),  # ...and its repair passes
        Reply(fence(FIXED.replace("0.3", "0.7")), 1100, 130),  # generation 2: a copy of g0001
        Reply(fence(OTHER), 1200, 140),  # the repair
    ]
    limits = SandboxLimits(wall_seconds=60, memory_bytes=2 * 2**30)
    with CannedServer(replies) as server:
        loop = SearchLoop(
            proposer=DraftingProposer(backend(server), drafts=1, repair_rounds=1, precheck=check),
            checker=checker,
            sandbox=lambda source, pid: SandboxedProgram(source, pid, limits),
            evaluator=SuiteEvaluator([task], encoder),
            ledger=ledger,
            registered=library,
        )
        loop.run(Budget(generations=2))
        assert server.pending == 0
    records = Ledger(tmp_path).records
    assert [(r.generation, r.status) for r in records] == [
        (0, Status.OK),
        (1, Status.OK),
        (2, Status.OK),
    ]
    g1, g2 = records[1], records[2]
    assert (tmp_path / (g1.source_path or "")).read_text() == FIXED
    assert [a["status"] for a in g1.attempts] == ["crashed"]
    assert "NameError" in str(g1.attempts[0]["reason"])
    assert g1.attempts[0]["reply"] == fence(BROKEN)  # the failed draft itself is kept
    assert (g1.tokens_in, g1.tokens_out) == (1900, 220)
    assert g1.proposer == "draft:openai" and g1.llm_seconds > 0
    assert [a["status"] for a in g2.attempts] == ["rejected"]
    assert "near-duplicate of g0001" in str(g2.attempts[0]["reason"])
    assert (g2.tokens_in, g2.tokens_out) == (2300, 270)
    assert g2.per_task_delta.keys() == {"aila_statutes"}


LOST_CONSTANTS = """import numpy as np
from embedding_ttc.programs.primitives.channels import fuse, prf_scores


def program(Q, D, S, ctx):
    P = prf_scores(Q, D, S, k=K, alpha=ALPHA)
    return fuse([S, P], [W_S, W_NEW])
"""


def test_constants_lost_in_a_repair_come_back_from_the_earlier_draft_then_the_examples():
    earlier = "import numpy as np\nK = 5\nALPHA = 0.25\nSCALE = np.sqrt(2)\n"
    example = "W_S = 1.0\nK = 3\n"
    fixed, notes = define_constants(LOST_CONSTANTS, [earlier, example])
    assert notes == (
        "defined ALPHA = 0.25 as before",
        "defined K = 5 as before",
        "defined W_S = 1.0 as before",
    )
    tree = ast.parse(fixed)
    assigned = [n.targets[0].id for n in tree.body if isinstance(n, ast.Assign)]
    assert assigned == ["ALPHA", "K", "W_S"]  # after the imports; W_NEW has no donor
    imports_end = max(n.end_lineno for n in tree.body if isinstance(n, ast.ImportFrom))
    assert all(n.lineno > imports_end for n in tree.body if isinstance(n, ast.Assign))
    assert define_constants(fixed, [earlier, example]) == (fixed, ())  # W_NEW stays undefined
    assert define_constants("def program(:", [earlier]) == ("def program(:", ())


def test_a_repair_that_drops_the_constants_passes_the_precheck(tmp_path):
    first = "\n".join(
        [
            "```python",
            '"""Novelty: two feedback rounds.\nHypothesis: the second round adds terms."""',
            "from embedding_ttc.programs.primitives.channels import fuse, prf_scores",
            "from embedding_ttc.programs.primitives.scores import candidate_mask",
            "K = 4",
            "ALPHA = 0.6",
            "",
            "def program(Q, D, S, ctx):",
            "    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)",
            "    P = prf_scores(Q, D, S, k=K, alpha=ALPHA, mask=mask)",
            "    return fuse([S, P], [1.0, 0.5], mask) + undefined_thing",
            "```",
        ]
    )
    repaired = first.replace("K = 4\nALPHA = 0.6\n", "").replace(" + undefined_thing", "")
    seen: list[str] = []

    def check(source: str) -> PrecheckResult:
        seen.append(source)
        if "undefined_thing" in source:
            return PrecheckResult(False, Status.CRASHED, "NameError: name 'undefined_thing'")
        ast.parse(source)
        namespace: dict[str, object] = {}
        exec(compile(source, "<draft>", "exec"), namespace)  # constants must be defined
        assert namespace["K"] == 4 and namespace["ALPHA"] == 0.6
        return PrecheckResult(True, Status.OK)

    with CannedServer([Reply(first), Reply(repaired)]) as server:
        proposer = DraftingProposer(backend(server), drafts=1, repair_rounds=1, precheck=check)
        proposal = proposer.propose(small_state())
    assert "K = 4" in proposal.source and "ALPHA = 0.6" in proposal.source
    assert len(seen) == 2


SWALLOWED = '''"""
Novelty: mixes the cosine scores with BM25 by rank.
Hypothesis: terms the encoder misses are in BM25.

Import exactly as shown; nothing else exists.
from embedding_ttc.programs.primitives.channels import fuse, bm25_scores
from embedding_ttc.programs.primitives.scores import candidate_mask

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    return fuse([S, bm25_scores(ctx)], None, mask, "rrf")
"""
'''


def test_a_docstring_that_swallowed_the_program_is_closed_after_the_claims():
    fixed, notes = close_docstring(SWALLOWED)
    assert notes == ("closed the module docstring after line 5",)
    tree = ast.parse(fixed)
    assert ast.get_docstring(tree).endswith("Import exactly as shown; nothing else exists.")
    assert [type(n).__name__ for n in tree.body] == [
        "Expr",
        "ImportFrom",
        "ImportFrom",
        "FunctionDef",
    ]
    # A module that defines program, or whose docstring holds no program, is left alone.
    assert close_docstring(fixed) == (fixed, ())
    prose = '"""Novelty: x.\nHypothesis: y."""\n'
    assert close_docstring(prose) == (prose, ())


HOISTABLE = """\
from embedding_ttc.programs.primitives.channels import bm25_scores, mask_for, prf_scores
from embedding_ttc.programs.primitives.scores import rrf

K = 3


def program(Q, D, S, ctx):
    \"\"\"A channel added above the line that makes the mask.\"\"\"
    P = prf_scores(Q, D, S, k=K, alpha=0.5, mask=mask)
    lexical = bm25_scores(ctx)
    late = rrf([lexical, S], mask=mask)
    mask = mask_for(ctx, S)
    both = rrf([lexical, P, late], mask=mask)
    return both
"""


def test_an_assignment_read_before_it_is_made_moves_to_the_start_of_program():
    repaired, notes = hoist_assignments(HOISTABLE)
    assert notes == ("moved the assignment of mask to the start of program()",)
    body = repaired.split("def program(Q, D, S, ctx):\n")[1].splitlines()
    assert body[1] == "    mask = mask_for(ctx, S)"  # after the docstring, before its readers
    assert repaired.count("mask = mask_for(ctx, S)") == 1
    assert repair_source(HOISTABLE)[0] == repaired
    # Not moved: a line that reads a local made later (it would then read it too early), one
    # already bound earlier, and a program that reads nothing too early.
    reads_local = HOISTABLE.replace("mask = mask_for(ctx, S)", "mask = mask_for(ctx, late)")
    assert hoist_assignments(reads_local) == (reads_local, ())
    rebound = HOISTABLE.replace("    P = prf", "    mask = None\n    P = prf")
    assert hoist_assignments(rebound) == (rebound, ())
    assert hoist_assignments(repaired) == (repaired, ())
    assert hoist_assignments("def program(Q, D, S, ctx):\n    return S\n")[1] == ()


RRF_WITH_WEIGHTS = """\"\"\"Sentence MaxSim fused with BM25 — « ranks »\"\"\"

from embedding_ttc.programs.primitives.channels import bm25_scores, chunk_scores, mask_for
from embedding_ttc.programs.primitives.scores import rrf


def program(Q, D, S, ctx):
    mask = mask_for(ctx, S)
    lexical = bm25_scores(ctx)
    M = chunk_scores(Q, ctx, "sentence", "max", mask)
    first = rrf([lexical, S, M], [1.0], mask)  # « the weights »
    weights = [0.5, 0.5]
    return rrf(
        [first, rrf([S, M], (1, 2))],
        weights,
        mask,
        k=10,
    )
"""


def test_weights_given_to_rrf_as_its_second_argument_are_dropped():
    # What the 1.5B model wrote in 4 of 20 edit generations: rrf(channels, weights, mask),
    # from when rrf took its mask second (fuse takes weights second).
    repaired, notes = drop_rrf_weights(RRF_WITH_WEIGHTS)
    assert "    first = rrf([lexical, S, M], mask)  # « the weights »" in repaired
    assert "    return rrf([first, rrf([S, M])], mask, k=10)" in repaired
    assert notes == (
        "dropped the weights [1.0] given to rrf, which takes no weights",
        "dropped the weights weights given to rrf, which takes no weights",
        "dropped the weights (1, 2) given to rrf, which takes no weights",
    )
    # The repairs then pass the mask, and k after it, by keyword.
    whole = repair_source(RRF_WITH_WEIGHTS)[0]
    assert "    first = rrf([lexical, S, M], mask=mask)  # « the weights »" in whole
    assert "    return rrf([first, rrf([S, M])], mask=mask, k=10)" in whole
    # Left alone: rrf with its mask, a mask of None, and a source that does not parse.
    assert drop_rrf_weights(repaired) == (repaired, ())
    plain = "def program(Q, D, S, ctx):\n    return rrf([S, S], None)\n"
    assert drop_rrf_weights(plain) == (plain, ())
    assert drop_rrf_weights("def program(:\n") == ("def program(:\n", ())
