"""The warm sandboxed worker: one contained child per program, replaced after a failed call.

Each failing program fails only its own call: the next call is answered by a new child, with
the same scores as the per-call sandbox.
"""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import pytest

from embedding_ttc.program_files.sandbox.limits import SandboxLimits
from embedding_ttc.program_files.sandbox.program import SandboxedProgram
from embedding_ttc.program_files.sandbox.verdict import SandboxFailure
from embedding_ttc.program_files.sandbox.warm import WarmProgram, warm
from embedding_ttc.programs.base import Context
from embedding_ttc.programs.outcome import Status

# A program whose behaviour the query text chooses: one source, a failing call, then a good one.
SOURCE = """\
import numpy as np


def program(Q, D, S, ctx):
    what = ctx.query_texts[0]
    if what == "crash":
        raise ValueError("asked to crash")
    if what == "loop":
        while True:
            pass
    if what == "flood":
        for _ in range(100):
            ctx.encode_fn(["more text"] * 10)
    if what == "exit":
        raise SystemExit(3)
    if what == "open":
        open("/etc/passwd").read()
    return S + np.float32(0.5) * (Q @ ctx.encode_fn(list(ctx.doc_texts)).T)
"""


def encode(texts, view=None, dim=None, max_length=None):
    rng = np.random.default_rng(sum(len(t) for t in texts))
    return rng.standard_normal((len(texts), 4)).astype(np.float32)


def inputs(query: str):
    rng = np.random.default_rng(0)
    Q = rng.standard_normal((1, 4)).astype(np.float32)
    D = rng.standard_normal((5, 4)).astype(np.float32)
    ctx = Context(
        encode_fn=encode,
        query_texts=(query,),
        doc_texts=tuple(f"doc {i}" for i in range(5)),
        query_ids=("q0",),
        doc_ids=tuple(f"d{i}" for i in range(5)),
        candidates=None,
        views_collapsed=True,
        index_time=nullcontext,
    )
    return Q, D, Q @ D.T, ctx


LIMITS = SandboxLimits(wall_seconds=3.0, encode_texts_per_item=20.0)


@pytest.fixture
def program():
    warm_program = WarmProgram(SOURCE, "chooser", LIMITS)
    yield warm_program
    warm_program.close()


def test_calls_reuse_one_child_and_score_as_the_per_call_sandbox(program):
    expected = SandboxedProgram(SOURCE, "chooser", LIMITS)(*inputs("cats"))
    first = program(*inputs("cats"))
    pid = program.pid
    for _ in range(3):
        np.testing.assert_array_equal(program(*inputs("cats")), expected)
    np.testing.assert_array_equal(first, expected)
    assert program.pid == pid and program.started == 1


@pytest.mark.parametrize(
    ("query", "status", "message"),
    [
        ("crash", Status.CRASHED, "asked to crash"),
        ("loop", Status.TIMEOUT, "timed out after 3"),
        ("flood", Status.BUDGET, "more than 120 texts"),
        ("exit", Status.CRASHED, "SystemExit"),
        ("open", Status.REJECTED, "/etc/passwd"),
    ],
)
def test_a_failed_call_replaces_the_child_and_the_next_call_succeeds(
    program, query, status, message
):
    good = program(*inputs("cats"))
    old = program.pid
    with pytest.raises(SandboxFailure) as failure:
        program(*inputs(query))
    assert failure.value.status == status
    assert message in failure.value.reason
    assert program.pid is None  # the failed child is gone, killed and reaped
    np.testing.assert_array_equal(program(*inputs("cats")), good)
    assert program.pid not in (None, old) and program.started == 2


def test_a_program_that_does_not_compile_fails_at_start_with_its_error():
    broken = WarmProgram("def program(Q, D, S, ctx)\n    return S\n", "broken", LIMITS)
    with pytest.raises(SandboxFailure) as failure:
        broken.start()
    assert failure.value.status == Status.CRASHED
    assert "SyntaxError" in failure.value.reason
    assert broken.pid is None


def test_warm_wraps_only_per_call_sandboxed_programs():
    cold = SandboxedProgram(SOURCE, "chooser", LIMITS)
    made = warm(cold)
    assert isinstance(made, WarmProgram)
    assert (made.source, made.name, made.limits) == (cold.source, cold.name, cold.limits)
    assert warm(made) is made
    library = object()
    assert warm(library) is library  # type: ignore[arg-type]


class CountingTexts(tuple):
    """Document texts that count how often they are read in full (RowTexts reads from disk)."""

    reads = 0

    def __iter__(self):
        type(self).reads += 1
        return super().__iter__()


TEXTS_SOURCE = """\
import numpy as np


def program(Q, D, S, ctx):
    if ctx.query_texts[0] == "ignore":
        return S + np.float32(len(ctx.doc_texts))
    widths = np.array([len(t) for t in ctx.doc_texts], dtype=np.float32)
    joined = ctx.doc_texts + ("extra",)
    return S + widths + ctx.doc_lengths.astype(np.float32) + np.float32(len(joined))
"""


@pytest.mark.parametrize("kind", [SandboxedProgram, WarmProgram])
def test_document_texts_reach_the_child_only_when_the_program_reads_them(kind):
    texts = CountingTexts(("one two", "three", "four five six", "", "seven eight"))
    program = kind(TEXTS_SOURCE, "texts", LIMITS)
    try:
        for query, reads in (("ignore", 0), ("read", 1)):
            Q, D, S, ctx = inputs(query)
            ctx = Context(**{**ctx.__dict__, "doc_texts": texts})
            CountingTexts.reads = 0
            out = program(Q, D, S, ctx)
            assert CountingTexts.reads == reads
            if query == "ignore":  # the count is known without the texts
                np.testing.assert_allclose(out, S + 5)
            else:  # the texts and word counts the parent has, read once per call
                widths = np.array([len(t) for t in texts], dtype=np.float32)
                np.testing.assert_allclose(out, S + widths + ctx.doc_lengths + 6)
    finally:
        if isinstance(program, WarmProgram):
            program.close()


def test_a_child_killed_from_outside_mid_request_fails_that_request_and_the_next_is_answered(
    program,
):
    """kill -9 of the warm child (an operator, the OOM killer) while it computes."""
    import os
    import signal
    import threading
    import time

    good = program(*inputs("cats"))
    child = program.pid
    outcome: list[BaseException] = []

    def call() -> None:
        try:
            program(*inputs("loop"))  # computing until its wall time, unless killed first
        except BaseException as exc:
            outcome.append(exc)

    caller = threading.Thread(target=call)
    started = time.monotonic()
    caller.start()
    time.sleep(0.5)
    os.kill(child, signal.SIGKILL)
    caller.join(timeout=10)
    assert not caller.is_alive()
    assert time.monotonic() - started < LIMITS.wall_seconds  # ended by the kill, not the clock
    (failure,) = outcome
    # A SIGKILL from outside looks like the kernel's out-of-memory killer, the usual sender.
    assert isinstance(failure, SandboxFailure) and failure.status == Status.MEMORY
    assert "killed by SIGKILL" in failure.reason and "from outside" in failure.reason
    np.testing.assert_array_equal(program(*inputs("cats")), good)
    assert program.pid not in (None, child) and program.started == 2
