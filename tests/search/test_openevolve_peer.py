"""The OpenEvolve peer's files (benchmarks/openevolve_peer) agree with the search they run.

OpenEvolve itself is not installed here (it runs from its own environment, run.sh); these
tests check what our side of the wiring promises: the initial program is the edit
proposer's seed and passes our checks with OpenEvolve's markers, the evaluator asks for the
settings of our transfer run, returns only search-part numbers, and the system message states
our interface and constraints as they are in the code.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from embedding_ttc.program_files.checks.source import check_source
from embedding_ttc.program_files.contract import CONSTRAINTS, INTERFACE_TEXT
from embedding_ttc.runs.config import read_run_config
from embedding_ttc.runs.ledger import Ledger
from embedding_ttc.runs.split import read_split
from embedding_ttc.search.loop import P0_SOURCE
from embedding_ttc.search.novelty import fingerprint, structure
from embedding_ttc.search.prompts.helper_list import helper_section
from embedding_ttc.search.strategies.edit.seeds import SEEDS

REPO = Path(__file__).resolve().parents[2]
PEER = REPO / "benchmarks" / "openevolve_peer"
TRANSFER_RUN = REPO / "results" / "search-transfer"


def _evaluator_module() -> ModuleType:
    path = PEER / "evaluator.py"
    spec = importlib.util.spec_from_file_location("openevolve_peer_evaluator", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_initial_program_is_the_edit_proposers_seed_with_evolve_markers():
    source = (PEER / "initial_program.py").read_text()
    body = source.split("# EVOLVE-BLOCK-START", 1)[1].split("# EVOLVE-BLOCK-END", 1)[0]
    assert body.strip() and body.strip() in SEEDS["BM25DenseRRF"]
    check_source(source, task_names={"aila_statutes"})
    assert structure(source) == structure(SEEDS["BM25DenseRRF"])
    assert fingerprint(structure(source)) != fingerprint(structure(P0_SOURCE))


def test_the_evaluator_asks_for_the_settings_of_our_transfer_run():
    evaluator = _evaluator_module()
    config, setup = evaluator.search_settings({"EMBEDDING_TTC_OE_RUN_DIR": "/runs/oe"})
    recorded = read_run_config(TRANSFER_RUN)
    assert recorded is not None
    assert setup.run_dir == Path("/runs/oe") and setup.data_dir is None
    assert str(config.proposer) == "openevolve" and config.proposer.strategy == "external"
    assert (config.suite, config.tasks) == (recorded.suite, recorded.tasks)
    assert (config.encoder, config.seed) == (recorded.encoder, recorded.seed)
    assert config.split is not None and recorded.split is not None
    assert config.split.validation_share == recorded.split.validation_share
    assert config.reference == recorded.reference and config.objective == recorded.objective
    assert config.shortlist == recorded.shortlist and config.model is None
    smoke, _ = evaluator.search_settings(
        {
            "EMBEDDING_TTC_OE_RUN_DIR": "/runs/oe",
            "EMBEDDING_TTC_OE_TASKS": "aila_statutes, limit-small",
            "EMBEDDING_TTC_OE_MODEL": "qwen2.5-coder-0.5b",
        }
    )
    assert smoke.tasks == ["aila_statutes", "limit-small"] and smoke.model == "qwen2.5-coder-0.5b"
    assert smoke.split is not None and smoke.split.validation_tasks == []
    with pytest.raises(RuntimeError, match="EMBEDDING_TTC_OE_RUN_DIR"):
        evaluator.search_settings({})


def test_the_system_message_states_our_interface_constraints_and_helpers():
    config = yaml.safe_load((PEER / "config.yaml").read_text())
    message = config["prompt"]["system_message"]
    assert INTERFACE_TEXT in message
    for name, statement in CONSTRAINTS:
        assert f"- {name}: {statement}" in message
    assert helper_section(10) in message
    assert config["evaluator"]["cascade_evaluation"] is False  # the loop is built once
    assert config["evaluator"]["max_retries"] == 0  # a retry would add a ledger line


def test_the_evaluator_returns_search_numbers_and_records_in_our_ledger(
    tmp_path, packaged_datasets, monkeypatch
):
    run = tmp_path / "run"
    monkeypatch.setenv("EMBEDDING_TTC_OE_RUN_DIR", str(run))
    monkeypatch.setenv("EMBEDDING_TTC_OE_TASKS", "aila_statutes")
    monkeypatch.setenv("EMBEDDING_TTC_OE_ENCODER", "tokenlearn-static-64")
    monkeypatch.setenv("EMBEDDING_TTC_OE_DATA_DIR", str(packaged_datasets))
    monkeypatch.setenv("EMBEDDING_TTC_OE_MODEL", "qwen2.5-coder-0.5b")
    evaluator = _evaluator_module()
    initial = evaluator.evaluate(str(PEER / "initial_program.py"))
    child = tmp_path / "child.py"
    child.write_text(
        "import numpy as np\n\n\ndef program(Q, D, S, ctx):\n"
        "    return S - 0.05 * np.log1p(ctx.doc_lengths.astype(np.float32))[None, :]\n"
    )
    scored = evaluator.evaluate(str(child))
    refused = tmp_path / "refused.py"
    refused.write_text("import os\n\n\ndef program(Q, D, S, ctx):\n    return S\n")
    failed = evaluator.evaluate(str(refused))
    rewritten = tmp_path / "rewritten.py"  # a model's copy of the seed is not the seed itself
    rewritten.write_text(SEEDS["BM25DenseRRF"].replace("# None, or", "# the mask: None, or"))
    copied = evaluator.evaluate(str(rewritten))

    records = Ledger(run).records
    assert [r.program_id for r in records] == ["g0000-P0", "g0001", "g0002", "g0003"]
    # The seed is the reference: Δ 0 against itself, BM25DenseRRF's cost (no encode), no line.
    assert initial == {"combined_score": 1.0, "search_delta": 0.0, "cost_ratio": 1.0}
    seen = records[1].seen_by_proposer("reference")
    assert scored == {
        "combined_score": pytest.approx(1.0 + (seen.mean_delta or 0.0)),
        "search_delta": pytest.approx(seen.mean_delta),
        "cost_ratio": pytest.approx(seen.cost_ratio),
    }
    whole = records[1].mean("reference", "all")
    assert whole is not None and scored["search_delta"] != pytest.approx(whole)
    assert records[1].proposer == "openevolve" and records[1].model == "qwen2.5-coder-0.5b"
    assert failed == {"combined_score": 0.0, "status": "rejected", "reason": records[2].reason}
    assert "no-external-model" in failed["reason"]
    assert copied["combined_score"] == 0.0
    assert "near-duplicate of seed:BM25DenseRRF" in copied["reason"]
    config = read_run_config(run)
    assert config is not None and config.objective == "reference"
    assert str(config.proposer) == "openevolve" and config.model == "qwen2.5-coder-0.5b"
    assert config.proposer.strategy == "external"
    assert read_split(run) is not None


def _proposers_benchmark() -> ModuleType:
    path = REPO / "benchmarks" / "proposers.py"
    spec = importlib.util.spec_from_file_location("proposers_benchmark", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_iterations_openevolve_dropped_count_as_generations_without_a_valid_program(tmp_path):
    bench = _proposers_benchmark()
    assert bench.openevolve_iterations(tmp_path) is None
    assert bench.openevolve_lines(tmp_path, 20) is None
    found = {5: [1, 2, 4, 5], 10: [1, 2, 4, 5, 7, 8, 9]}  # iterations 3, 6 and 10 dropped
    for n, iterations in found.items():
        folder = tmp_path / "openevolve" / "checkpoints" / f"checkpoint_{n}"
        (folder / "programs").mkdir(parents=True)
        (folder / "metadata.json").write_text(json.dumps({"last_iteration": n}))
        for i in [0, *iterations]:  # 0: the initial program
            program = {"id": f"p{i}", "iteration_found": i}
            (folder / "programs" / f"p{i}.json").write_text(json.dumps(program))
    assert bench.openevolve_iterations(tmp_path) == 10
    # The last checkpoint's programs say which iteration found each ledger line.
    assert [bench.openevolve_lines(tmp_path, n) for n in (2, 5, 9, 60)] == [2, 4, 7, 7]
    # The committed run: its first 20 iterations put 17 programs in the ledger, OpenEvolve
    # dropped 3 replies itself (a rewrite identical to its parent), 1 program was valid. The
    # run's later iterations leave that row as it was.
    run = REPO / "results" / "proposers" / "openevolve"
    assert bench.openevolve_lines(run, 20) == 17
    row = bench.run_row("openevolve", run, 20)
    assert (row.generations, row.valid) == (20, 1)
    assert row.statuses["dropped by the peer"] == 3
    assert sum(row.statuses.values()) == 20
    # Without the count, the ledger alone: 17 generations.
    first = tuple(r for r in Ledger(run).records if r.generation <= 17)
    assert bench.summarise("openevolve", first, 20).generations == 17
