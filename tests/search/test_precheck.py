"""The pre-check: a valid program passes; each broken one fails with its status and reason.

The encoder is the seeded fake of ``tests/fakes.py`` (the synthetic task's texts share words,
so its scores are not degenerate); the programs run in the real sandbox.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from embedding_ttc.program_files.checks.source import check_source
from embedding_ttc.program_files.sandbox.limits import SandboxLimits
from embedding_ttc.program_files.sandbox.program import SandboxedProgram
from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.ledger import Ledger
from embedding_ttc.runs.records import LedgerRecord
from embedding_ttc.search.novelty import registered_structures, structure
from embedding_ttc.search.precheck.check import (
    PRECHECK_WALL_SECONDS,
    precheck,
    precheck_limits,
)
from embedding_ttc.search.precheck.synthetic import synthetic_task
from embedding_ttc.search.prompts.examples import EXAMPLES
from ledger_records import evaluated

from fakes import HashingEncoder

LIMITS = precheck_limits(SandboxLimits(wall_seconds=600, memory_bytes=2 * 2**30))

REGISTERED_SOURCE = '''\
"""Registered: S plus its column z-score."""
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_cols


def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    boosted = S + 0.5 * zscore_cols(S, mask)
    return boosted.astype("float32")
'''
REGISTERED = {"library:Registered": structure(REGISTERED_SOURCE)}

PROGRAMS = {
    "shape": "def program(Q, D, S, ctx):\n    return S[:, :3].copy()\n",
    "nan": "import numpy as np\n\n\ndef program(Q, D, S, ctx):\n    return S * np.nan\n",
    "undefined": "def program(Q, D, S, ctx):\n    x = S + 1\n    return zscore(x)\n",
    "nondeterministic": (
        "import numpy as np\n\n\ndef program(Q, D, S, ctx):\n"
        "    salt = int(repr(object()).split()[-1][:-1], 16) % 9973\n"
        "    return S + np.float32(salt * 1e-7)\n"
    ),
    "near-duplicate": REGISTERED_SOURCE.replace("boosted", "out").replace("0.5", "0.25"),
    "forbidden-import": "import os\n\n\ndef program(Q, D, S, ctx):\n    return S.copy()\n",
    "syntax": "def program(Q, D, S, ctx)\n    return S\n",
    "pool-only": (
        "def program(Q, D, S, ctx):\n"
        "    if ctx.candidates is not None:\n"
        "        return S[:, : len(ctx.candidates[0])].copy()\n"
        "    return S.copy()\n"
    ),
}

EXPECTED = {
    "shape": (Status.INVALID_OUTPUT, "returned shape (5, 3), expected (5, 12)", ""),
    "nan": (Status.INVALID_OUTPUT, "non-finite", ""),
    "undefined": (Status.CRASHED, "NameError: name 'zscore' is not defined", "return zscore(x)"),
    "nondeterministic": (Status.REJECTED, "deterministic: two runs", ""),
    "near-duplicate": (Status.REJECTED, "novel: near-duplicate of library:Registered", ""),
    "forbidden-import": (Status.REJECTED, "no-external-model: import of 'os'", ""),
    "syntax": (Status.REJECTED, "parse: expected ':' (line 1)", "def program(Q, D, S, ctx)"),
    "pool-only": (Status.INVALID_OUTPUT, "(pools, 5 queries x 12 documents)", ""),
}


@pytest.fixture(scope="module")
def encoder() -> HashingEncoder:
    return HashingEncoder(dim=32, seed=0)


def run(source: str, encoder, registered=REGISTERED, limits: SandboxLimits = LIMITS):
    return precheck(
        source,
        checker=check_source,
        registered=registered,
        sandbox_factory=lambda src, name: SandboxedProgram(src, name, limits),
        encoder=encoder,
    )


def test_valid_programs_pass(encoder):
    for example in EXAMPLES:
        result = run(example.source, encoder)
        assert result.ok and result.status == Status.OK, result
        assert result.traceback == ""


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_broken_programs_fail_with_status_reason_and_traceback(name, encoder):
    status, reason, traceback = EXPECTED[name]
    result = run(PROGRAMS[name], encoder)
    assert not result.ok
    assert result.status == status, result
    assert reason in result.reason, result
    if traceback:
        assert traceback in result.traceback, result
    else:
        assert "Traceback" not in result.reason


def test_a_crash_reports_where_it_ran_and_its_frames(encoder):
    result = run(PROGRAMS["undefined"], encoder)
    assert result.reason.startswith("synthetic task (full corpus, 5 queries x 12 documents):")
    assert result.traceback.startswith("Traceback (innermost last):")
    assert 'File "<program precheck>", line 3, in program' in result.traceback


def test_a_timeout_is_a_timeout(encoder):
    limits = SandboxLimits(wall_seconds=1.0, memory_bytes=2 * 2**30)
    result = run("def program(Q, D, S, ctx):\n    while True:\n        pass\n", encoder, {}, limits)
    assert result.status == Status.TIMEOUT and not result.ok


def test_the_limits_are_short():
    assert precheck_limits(SandboxLimits()).wall_seconds == PRECHECK_WALL_SECONDS
    assert precheck_limits(SandboxLimits(wall_seconds=5)).wall_seconds == 5
    assert precheck_limits(SandboxLimits(memory_bytes=2**30)).memory_bytes == 2**30


def test_synthetic_task_is_small_deterministic_and_has_a_pool_variant():
    full, pool = synthetic_task(), synthetic_task(pool=True)
    assert full == synthetic_task() and not full.is_pool
    assert (full.n_docs, full.n_queries) == (12, 5)
    assert pool.is_pool and pool.pools is not None
    for qid, relevant in pool.qrels.items():
        assert set(relevant) <= set(pool.pools[qid])  # every relevant document is in the pool
        assert len(pool.pools[qid]) == 6
    words = [set(t.lower().split()) for t in full.doc_texts]
    assert any(words[i] & words[j] - {"the", "a", "and"} for i in range(12) for j in range(i))
    assert any("\n\n" in t for t in full.doc_texts)  # a paragraph break for the splitters


def test_registered_structures_follow_the_ledger(tmp_path: Path):
    ledger = Ledger(tmp_path)
    source = EXAMPLES[0].source
    path = ledger.save_source("g0001", source)
    ledger.append(evaluated(1, "g0001", {"t": 0.01}, source_path=str(path.relative_to(tmp_path))))
    ledger.append(
        LedgerRecord(generation=2, program_id="g0002", status=Status.CRASHED, proposer="t")
    )
    out = registered_structures(ledger, REGISTERED)
    assert set(out) == {"library:Registered", "g0001"}
    assert out["g0001"] == structure(source)


def test_the_encoder_is_metered_like_the_evaluation(encoder):
    """A program's encodes go through the real encoder (the fake counts its calls)."""
    before = len(encoder.calls)
    assert run(EXAMPLES[0].source, encoder).ok
    assert len(encoder.calls) > before
    assert np.isfinite(encoder.encode(["x"], view="retrieval.query")).all()
