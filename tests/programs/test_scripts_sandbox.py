"""The tokenizer setting reaches a sandboxed program: its BM25 tokenises as the caller does."""

from __future__ import annotations

import numpy as np
import pytest

from embedding_ttc.program_files.sandbox.limits import SandboxLimits
from embedding_ttc.program_files.sandbox.program import run_source
from embedding_ttc.programs.primitives.tokenizers import TOKENIZER_ENV, use_tokenizer
from embedding_ttc.tasks.task import RetrievalTask

from fakes import HashingEncoder
from library_support import direct_call

SOURCE = """
from embedding_ttc.programs.primitives.lexical import BM25


def program(Q, D, S, ctx):
    return BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
"""
LIMITS = SandboxLimits(wall_seconds=60.0, memory_bytes=2 * 2**30)


@pytest.fixture()
def chinese_call() -> tuple:
    task = RetrievalTask(
        name="zh",
        doc_ids=["d1", "d2"],
        doc_titles=["", ""],
        doc_bodies=["北京大学的学生。", "上海的天气很好。"],
        query_ids=["q1"],
        query_texts=["北京大学"],
        qrels={"q1": {"d1": 1}},
    )
    return direct_call(task, HashingEncoder())


def test_environment_variable_reaches_the_sandbox(chinese_call, monkeypatch) -> None:
    Q, D, S, ctx, _ = chinese_call
    monkeypatch.setenv(TOKENIZER_ENV, "ascii")
    assert not run_source(SOURCE, Q, D, S, ctx, LIMITS).any()  # ascii reads no Han
    monkeypatch.setenv(TOKENIZER_ENV, "unicode")
    scores = run_source(SOURCE, Q, D, S, ctx, LIMITS)
    assert scores[0, 0] > 0 and scores[0, 1] == 0


def test_use_tokenizer_block_reaches_the_sandbox(chinese_call, monkeypatch) -> None:
    Q, D, S, ctx, _ = chinese_call
    monkeypatch.delenv(TOKENIZER_ENV, raising=False)
    with use_tokenizer("ascii"):
        np.testing.assert_array_equal(run_source(SOURCE, Q, D, S, ctx, LIMITS), 0.0)
    assert run_source(SOURCE, Q, D, S, ctx, LIMITS)[0, 0] > 0
