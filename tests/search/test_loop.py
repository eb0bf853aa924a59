"""The search loop end to end: structural proposer on the smoke suite, an LLM through canned
replies (each hostile or broken reply ends with its status), and the CLI over the ledger.

The encoder is the PyPI-packaged tokenlearn static model (64-d, real, fast), so the loop's
evaluations run on real tasks in seconds; the default-encoder run is the slow test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from embedding_ttc.cli import main
from embedding_ttc.encoders.catalog import load_encoder
from embedding_ttc.program_files.checks.source import check_source
from embedding_ttc.program_files.sandbox.limits import SandboxLimits
from embedding_ttc.program_files.sandbox.program import SandboxedProgram
from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.config import read_run_config
from embedding_ttc.runs.frontier import frontier
from embedding_ttc.runs.ledger import Ledger
from embedding_ttc.runs.split import read_split
from embedding_ttc.search.backends.openai_chat import OpenAIBackend
from embedding_ttc.search.evaluator import ComputeLock, SuiteEvaluator
from embedding_ttc.search.loop import Budget, SearchLoop
from embedding_ttc.search.novelty import library_structures
from embedding_ttc.search.strategies.draft.single import SingleDraftProposer
from embedding_ttc.search.structural.proposer import StructuralProposer
from embedding_ttc.tasks.catalog import load_task

from .canned_server import CannedServer, Reply

FAST_ENCODER = "tokenlearn-static-64"
PROGRAMS = Path(__file__).resolve().parents[1] / "program_files" / "programs"


def fence(code: str, prose: str = "") -> str:
    return f"{prose}\n```python\n{code}\n```\n"


VALID = '''"""Novelty: adds a row z-scored reversed-view channel to the cosine.
Hypothesis: standardising each query's scores and adding a second view helps ranking.
"""
import numpy as np
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows


def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    with ctx.index_time():
        docs = ctx.encode_fn(ctx.doc_texts, view="retrieval.query")
    return zscore_rows(S, mask) + 0.5 * zscore_rows(Q @ docs.T, mask)
'''

NEAR_DUPLICATE = VALID.replace("docs", "rev").replace("0.5", "0.25").replace("Novelty:", "N:")

NONDETERMINISTIC = """import numpy as np


def program(Q, D, S, ctx):
    salt = int(repr(object()).split()[-1][:-1], 16) % 9973
    return S + np.float32(salt * 1e-7)
"""

INFINITE = "def program(Q, D, S, ctx):\n    while True:\n        pass\n"
MEMORY_BOMB = (PROGRAMS / "memory_bomb_numpy.py").read_text()
FORBIDDEN = "import os\n\n\ndef program(Q, D, S, ctx):\n    os.system('true')\n    return S\n"
MALFORMED = "def program(Q, D, S, ctx)\n    return S +\n"

CANNED = [
    (Reply(fence(VALID, "Novelty: a second view. Hypothesis: it helps.")), Status.OK, ""),
    (Reply(fence(MALFORMED)), Status.REJECTED, "interface"),
    (
        Reply("I would try a Rocchio step with K=3, but I will not write code today."),
        Status.REJECTED,
        "parse",
    ),
    (Reply(fence(FORBIDDEN)), Status.REJECTED, "no-external-model"),
    (Reply(fence(INFINITE)), Status.TIMEOUT, ""),
    (Reply(fence(MEMORY_BOMB)), Status.MEMORY, ""),
    (Reply(fence(NONDETERMINISTIC)), Status.REJECTED, "deterministic"),
    (Reply(fence(NEAR_DUPLICATE)), Status.REJECTED, "near-duplicate of g0001"),
]


@pytest.fixture(scope="module")
def fast_encoder():
    return load_encoder(FAST_ENCODER)


def make_loop(run_dir: Path, proposer, encoder, tasks, limits: SandboxLimits) -> SearchLoop:
    names = {t.name for t in tasks}
    return SearchLoop(
        proposer=proposer,
        checker=lambda source: check_source(source, task_names=names),
        sandbox=lambda source, pid: SandboxedProgram(source, pid, limits),
        evaluator=SuiteEvaluator(tasks, encoder, lock=ComputeLock(run_dir / "compute.lock")),
        ledger=Ledger(run_dir),
        registered=library_structures(),
    )


def test_llm_replies_each_end_with_the_right_status(tmp_path, packaged_datasets, fast_encoder):
    task = load_task("aila_statutes", packaged_datasets)
    limits = SandboxLimits(wall_seconds=4.0, memory_bytes=2 * 2**30)
    with CannedServer([reply for reply, _, _ in CANNED]) as server:
        backend = OpenAIBackend(model="canned", base_url=server.openai_base_url, timeout=10)
        proposer = SingleDraftProposer(backend)
        loop = make_loop(tmp_path, proposer, fast_encoder, [task], limits)
        front = loop.run(Budget(generations=len(CANNED)))
        prompts = server.prompts
    records = Ledger(tmp_path).records
    assert [r.generation for r in records] == list(range(len(CANNED) + 1))
    assert records[0].program_id == "g0000-P0" and records[0].mean_delta == 0.0
    for record, (_, status, reason) in zip(records[1:], CANNED, strict=True):
        assert record.status == status, (record.program_id, record.reason)
        assert reason in record.reason
        assert record.proposer == "draft:openai" and record.model
    ok = records[1]
    assert ok.per_task_delta.keys() == {"aila_statutes"}
    assert ok.cost_ratio is not None and ok.cost_ratio > 1.0  # it re-encodes the documents
    assert (
        ok.per_task["aila_statutes"].index_calls > records[0].per_task["aila_statutes"].index_calls
    )
    assert ok.tokens_in > 0 and ok.tokens_out > 0
    # Every reply that had code was saved; the prose-only one had none.
    assert records[3].source_path is None
    assert (tmp_path / "programs" / "g0005.py").read_text() == INFINITE
    # The second prompt already shows the first program's result and source.
    assert prompts[1] is not None and "g0001" in prompts[1]
    assert front.pareto[0].program_id == "g0000-P0"


def test_structural_search_on_three_packaged_tasks_and_the_frontier_command(
    tmp_path, packaged_datasets, fast_encoder, capsys
):
    tasks = [
        load_task(n, packaged_datasets)
        for n in ("aila_statutes", "legal_summarization", "limit-small")
    ]
    loop = make_loop(tmp_path, StructuralProposer(seed=0), fast_encoder, tasks, SandboxLimits())
    front = loop.run(Budget(generations=3))
    records = Ledger(tmp_path).records
    assert [r.generation for r in records] == [0, 1, 2, 3]
    evaluated = [r for r in records[1:] if r.status == Status.OK]
    assert evaluated, [r.reason for r in records]
    for r in evaluated:
        assert r.per_task_delta.keys() == {"aila_statutes", "legal_summarization", "limit-small"}
        assert r.wtl is not None and r.wtl.total == 3
        assert (tmp_path / (r.source_path or "")).is_file()
        assert r.fingerprint
    assert front == frontier(records)
    assert main(["frontier", str(tmp_path), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [row["program_id"] for row in printed["pareto"]] == [r.program_id for r in front.pareto]
    # Resuming with a larger budget continues at generation 4, never repeating one.
    loop = make_loop(tmp_path, StructuralProposer(seed=0), fast_encoder, tasks, SandboxLimits())
    loop.run(Budget(generations=4))
    assert [r.generation for r in Ledger(tmp_path).records] == [0, 1, 2, 3, 4]


def test_frontier_command_on_a_folder_without_a_ledger(tmp_path, capsys):
    assert main(["frontier", str(tmp_path)]) == 2
    assert "not a search run directory" in capsys.readouterr().err


def test_a_search_opened_from_its_config_splits_compares_and_both_rules_read_it(
    tmp_path, packaged_datasets, capsys
):
    from embedding_ttc.runs.config import RunMismatchError
    from embedding_ttc.search.open import SearchSetup, open_search

    from .specs import run_config

    run = tmp_path / "run"
    config = run_config(["aila_statutes", "limit-small"], objective="reference")
    setup = SearchSetup(run_dir=run, data_dir=packaged_datasets)
    with open_search(config, setup) as loop:
        loop.run(Budget(2))
    split = read_split(run)
    assert split is not None and set(split.tasks) == {"aila_statutes", "limit-small"}
    recorded = read_run_config(run)
    assert recorded is not None and recorded.reference == "BM25DenseRRF"
    records = Ledger(run).records
    assert [r.generation for r in records] == [0, 1, 2]
    for r in records:
        if r.status == Status.OK:
            for task, outcome in r.per_task.items():
                assert set(outcome.parts) == {"search", "validation"}, task
                assert outcome.reference is not None and outcome.worst_query_delta is not None
    for rule in ("compute", "transfer"):
        assert main(["frontier", str(run), "--rule", rule, "--json"]) == 0
        printed = json.loads(capsys.readouterr().out)
        assert printed["rule"] == rule and printed["objective"] == "reference"
        expected = frontier(records, rule, "reference")
        assert [row["program_id"] for row in printed["admitted"]] == [
            r.program_id for r in expected.admitted
        ]
    # The split never changes under a run: another seed is another run.
    with (
        pytest.raises(RunMismatchError, match="seed: run has 0, asked 1"),
        open_search(config.model_copy(update={"seed": 1}), setup),
    ):
        pass
