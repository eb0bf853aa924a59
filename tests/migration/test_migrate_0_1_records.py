"""scripts/migrate_0_1_records.py: each older record is rewritten into the current schema with
the same numbers, a second run changes nothing, and every committed record is current.

``data/cell_schema_1.json`` is a committed result cell as schema 1 wrote it;
``data/ledger_schema_1.jsonl`` the first two lines of the first search run's ledger
(``results/search``: P0 and g0001) and a timeout line, as schema 1 wrote them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import ModuleType

import pytest

from embedding_ttc.analysis.cells import CellKey, CellStore, CellStoreError
from embedding_ttc.evaluation.comparison import WTL
from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.config import (
    RUN_CONFIG_FILE,
    ProposerSpec,
    RunConfigError,
    RunLimits,
    read_run_config,
)
from embedding_ttc.runs.frontier import frontier
from embedding_ttc.runs.ledger import LEDGER_FILE, Ledger, LedgerError

from .scripts import load_script

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data"
CELL_KEY = CellKey("all-MiniLM-L6-v2", "birco_doris_mae_dev", "BM25")
OLD_LIMITS = RunLimits(
    timeout_seconds=600.0, timeout_covers="program", encode_texts_per_item=256.0, memory_gb=8
)


@pytest.fixture(scope="module")
def script() -> ModuleType:
    return load_script("migrate_0_1_records")


def migrate(script: ModuleType, root: Path) -> list[str]:
    """Run the script on ``root``; the lines it printed."""
    said: list[str] = []

    def write(path: Path, text: str) -> None:
        path.write_text(text, encoding="utf-8")

    script.migrate([root], write, said.append)
    return said


def test_a_schema_1_cell_is_rewritten_with_its_comparison_embedded(script, tmp_path):
    store = CellStore(tmp_path)
    path = store.path(CELL_KEY)
    path.parent.mkdir(parents=True)
    shutil.copy(DATA / "cell_schema_1.json", path)
    with pytest.raises(CellStoreError, match="schema version 1"):
        store.load(CELL_KEY)
    said = migrate(script, tmp_path)
    assert len(said) == 1 and "cell schema 1 -> 3" in said[0]
    old = json.loads((DATA / "cell_schema_1.json").read_text())
    cell = store.load(CELL_KEY)
    assert cell.comparison.ndcg_at_10 == old["ndcg_at_10"] == 0.6203191473232053
    assert cell.comparison.baseline_ndcg_at_10 == old["baseline_ndcg_at_10"]
    assert cell.delta == old["delta_ndcg_at_10"] == -0.08725226997170513
    assert cell.comparison.wtl == WTL(wins=11, ties=0, losses=29)
    assert cell.per_query == old["per_query"]
    assert cell.bootstrap.p_value == old["bootstrap"]["p_value"]
    assert cell.source_sha256 is None  # a library program's
    # Written as the store writes it: a second run changes nothing.
    assert path.read_text() == cell.model_dump_json(indent=1) + "\n"
    assert migrate(script, tmp_path) == []


def test_a_schema_1_cell_without_its_counts_is_refused_naming_the_file(script, tmp_path):
    body = json.loads((DATA / "cell_schema_1.json").read_text())
    del body["wins"], body["ties"], body["losses"]
    path = tmp_path / "cells" / "BM25.json"
    path.parent.mkdir()
    path.write_text(json.dumps(body))
    with pytest.raises(script.MigrationError, match=f"(?s){path}.*per-query W/T/L"):
        migrate(script, tmp_path)
    assert json.loads(path.read_text()) == body  # untouched


def test_a_schema_1_ledger_is_rewritten_with_the_same_records_and_frontier(script, tmp_path):
    shutil.copy(DATA / "ledger_schema_1.jsonl", tmp_path / LEDGER_FILE)
    with pytest.raises(LedgerError, match="a ledger line of schema 1 is not read"):
        Ledger(tmp_path)
    said = migrate(script, tmp_path)
    assert said == [f"{tmp_path / LEDGER_FILE}: 3 ledger lines -> schema 3 (per-task comparisons "
                    "embedded)"]  # fmt: skip
    old = [json.loads(line) for line in (DATA / "ledger_schema_1.jsonl").read_text().splitlines()]
    p0, g1, failed = Ledger(tmp_path).records
    assert p0.wtl == WTL(wins=0, ties=10, losses=0)
    assert g1.wtl == WTL(wins=8, ties=0, losses=2)  # over tasks, as schema 1 counted
    assert g1.mean_delta == old[1]["mean_delta"] and g1.cost_ratio == old[1]["cost_ratio"]
    assert g1.per_task_delta == old[1]["per_task_delta"]
    task = g1.per_task["aila_casedocs"]
    assert task.comparison.ndcg_at_10 == 0.231736292433212
    assert task.comparison.baseline_ndcg_at_10 == 0.19716653360306224
    assert task.comparison.wtl is None  # schema 1 did not record per-query counts
    assert (task.cost_ratio, task.index_calls) == (1.0, 186)
    # A failure's zero counts are dropped: it carries no metrics.
    assert (old[2]["wins"], old[2]["ties"], old[2]["losses"]) == (0, 0, 0)
    assert failed.status is Status.TIMEOUT and failed.wtl is None and failed.per_task == {}
    assert [r.program_id for r in frontier([p0, g1, failed]).admitted] == ["g0001"]
    assert migrate(script, tmp_path) == []


SCHEMA_1_CONFIG = {
    "schema_version": 1, "suite": "discovery", "tasks": ["aila_casedocs"],
    "encoder": "all-MiniLM-L6-v2", "proposer": "structural", "model": None, "seed": 0,
    "shortlist": None,
}  # fmt: skip
SCHEMA_2_GUIDED = {
    "schema_version": 2, "suite": "discovery", "tasks": ["aila_casedocs"], "encoder": "e",
    "proposer": "llama-cpp", "model": "m", "seed": 0, "shortlist": None, "split": None,
    "reference": "BM25DenseRRF", "objective": "reference",
    "editing": {"mode": "guided", "repair_rounds": 1, "explore": 0.2, "context_tokens": 5000,
                "precheck": True, "ideas": False},
}  # fmt: skip


@pytest.mark.parametrize(
    ("body", "proposer"),
    [
        (SCHEMA_1_CONFIG, ProposerSpec(strategy="structural")),
        (
            SCHEMA_2_GUIDED,
            # Fields the file lacked take the values such runs ran with: every open edit
            # offered, no channel kept, no share.
            ProposerSpec(
                strategy="guided",
                backend="llama-cpp",
                options={
                    "repair_rounds": 1,
                    "explore": 0.2,
                    "offers": 0,
                    "keep": [],
                    "share": False,
                },
            ),
        ),
        (
            {**SCHEMA_1_CONFIG, "schema_version": 2, "proposer": "openevolve"},
            ProposerSpec(strategy="external", options={"peer": "openevolve"}),
        ),
    ],
)
def test_an_old_search_json_is_rewritten_as_its_spec_and_the_limits_it_ran_under(
    script, tmp_path, body, proposer
):
    (tmp_path / RUN_CONFIG_FILE).write_text(json.dumps(body))
    with pytest.raises(RunConfigError, match=f"schema {body['schema_version']} is not read"):
        read_run_config(tmp_path)
    said = migrate(script, tmp_path)
    assert len(said) == 1 and "the limits its run ran under written in" in said[0]
    config = read_run_config(tmp_path)
    assert config is not None and config.proposer == proposer and config.limits == OLD_LIMITS
    assert (config.model, config.reference) == (body["model"], body.get("reference"))
    assert migrate(script, tmp_path) == []


def test_every_committed_record_is_current(script, capsys):
    assert script.main(["--check", str(REPO / "results")]) == 0
    assert capsys.readouterr().out == "would change 0 files\n"
