"""search.json as a typed record: the committed ones read, write back byte for byte, resume
under the options that made them, a resume under other settings is refused with the settings
named, and a file of an older schema is refused with its schema named."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from embedding_ttc.runs.config import (
    RUN_CONFIG_FILE,
    ProposerSpec,
    RunConfig,
    RunConfigError,
    RunLimits,
    RunMismatchError,
    read_run_config,
    write_run_config,
)
from embedding_ttc.search.strategies import get_strategy

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "results" / "search" / RUN_CONFIG_FILE
FIXTURE = Path(__file__).parent / "data" / RUN_CONFIG_FILE
"""A configuration of the current schema: the committed run's settings, today's limits."""
DRAFTING = ProposerSpec(
    strategy="draft",
    backend="openai",
    options={
        "drafts": 2,
        "repair_rounds": 0,
        "prompt": "compact",
        "context_tokens": 3000,
        "precheck": True,
    },
)


def committed(tmp_path: Path, source: Path = COMMITTED) -> RunConfig:
    shutil.copy(source, tmp_path / RUN_CONFIG_FILE)
    config = read_run_config(tmp_path)
    assert config is not None
    return config


def fixture(tmp_path: Path) -> RunConfig:
    return committed(tmp_path, FIXTURE)


def test_the_committed_configuration_reads_and_writes_back_unchanged(tmp_path):
    config = committed(tmp_path)
    assert (config.encoder, config.proposer, config.model) == (
        "all-MiniLM-L6-v2",
        ProposerSpec(strategy="structural"),
        None,
    )
    assert str(config.proposer) == "structural"
    assert (config.split, config.reference, config.objective) == (None, None, "p0")
    assert len(config.tasks) == 10 and config.schema_version == 3
    # The limits its run ran under: 600 s not counting the encodes served, 256 texts per item.
    assert config.limits == RunLimits(
        timeout_seconds=600.0, timeout_covers="program", encode_texts_per_item=256.0, memory_gb=8
    )
    out = tmp_path / "again"
    out.mkdir()
    write_run_config(out, config)
    assert (out / RUN_CONFIG_FILE).read_bytes() == COMMITTED.read_bytes()
    assert read_run_config(out) == config


@pytest.mark.parametrize("version", [1, 2])
def test_a_file_of_an_older_schema_is_refused_naming_the_file_and_the_schema(tmp_path, version):
    body = {**json.loads(FIXTURE.read_text()), "schema_version": version}
    body["proposer"] = "structural"  # as schemas 1 and 2 named it
    path = tmp_path / RUN_CONFIG_FILE
    path.write_text(json.dumps(body))
    with pytest.raises(RunConfigError, match=f"schema {version} is not read") as caught:
        read_run_config(tmp_path)
    assert str(path) in str(caught.value)


def test_an_objective_against_no_reference_is_refused(tmp_path):
    body = {**json.loads(FIXTURE.read_text()), "objective": "reference"}
    (tmp_path / RUN_CONFIG_FILE).write_text(json.dumps(body))
    with pytest.raises(RunConfigError, match="needs a reference program"):
        read_run_config(tmp_path)


def test_the_proposer_is_written_as_its_spec(tmp_path):
    config = fixture(tmp_path).model_copy(update={"proposer": DRAFTING})
    write_run_config(tmp_path, config)
    body = json.loads((tmp_path / RUN_CONFIG_FILE).read_text())
    assert body["proposer"]["strategy"] == "draft" and body["proposer"]["backend"] == "openai"
    assert body["proposer"]["options"]["prompt"] == "compact"
    assert read_run_config(tmp_path) == config


def test_the_same_settings_resume(tmp_path):
    config = fixture(tmp_path)
    config.check_resume(None)  # a new run directory
    config.check_resume(config.model_copy())


def test_other_settings_are_named_as_recorded_and_as_asked(tmp_path):
    recorded = fixture(tmp_path)
    asked = recorded.model_copy(update={"seed": 3, "model": "gpt"})
    with pytest.raises(RunMismatchError) as caught:
        asked.check_resume(recorded)
    assert str(caught.value) == (
        "the run directory was made with other settings (model: run has None, asked 'gpt', "
        "seed: run has 0, asked 3); use a new --run-dir or the same options to resume"
    )


def test_another_proposer_is_a_mismatch(tmp_path):
    recorded = fixture(tmp_path)
    asked = recorded.model_copy(update={"proposer": DRAFTING})
    with pytest.raises(
        RunMismatchError, match=r"proposer: run has \{'strategy': 'structural'.*asked \{'strategy'"
    ):
        asked.check_resume(recorded)
    with pytest.raises(RunMismatchError, match="proposer"):
        recorded.check_resume(asked)


def test_a_malformed_configuration_is_an_error_naming_the_file(tmp_path):
    path = tmp_path / RUN_CONFIG_FILE
    path.write_text("{not json")
    with pytest.raises(RunConfigError, match="is not JSON"):
        read_run_config(tmp_path)
    body = {**json.loads(FIXTURE.read_text()), "surprise": 1}
    path.write_text(json.dumps(body))
    with pytest.raises(RunConfigError, match="surprise") as caught:
        read_run_config(tmp_path)
    assert str(path) in str(caught.value)
    assert read_run_config(tmp_path / "absent") is None


# ---------------------------------------------------------------------------------------------
# Every committed search.json


COMMITTED_RUNS = sorted(p.parent for p in (REPO / "results").rglob(RUN_CONFIG_FILE))


def _proposers_benchmark():
    from search.test_openevolve_peer import _proposers_benchmark

    return _proposers_benchmark()


def test_the_committed_runs_are_found():
    names = {str(p.relative_to(REPO / "results")) for p in COMMITTED_RUNS}
    assert {"search", "search-transfer", "proposers/draft", "proposers/guided-share"} <= names


@pytest.mark.parametrize("run", COMMITTED_RUNS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_committed_configuration_reads_into_a_valid_spec(run):
    config = read_run_config(run)
    assert config is not None and config.schema_version == 3
    spec = config.proposer
    strategy = get_strategy(spec.strategy)
    # The options are the strategy's, complete: they read and write back unchanged.
    assert strategy.write_options(strategy.read_options(spec.options)) == spec.options
    recorded = json.loads((run / RUN_CONFIG_FILE).read_text())["proposer"]
    assert spec.model_dump(mode="json") == recorded
    assert config.limits is not None  # every committed run records the limits it ran under


MIGRATED_SPECS = {
    "search-transfer": ("structural", None, {}),
    "proposers/draft": (
        "draft",
        "llama-cpp",
        {"drafts": 3, "repair_rounds": 1, "prompt": "compact", "context_tokens": 3000,
         "precheck": True},
    ),
    "proposers/edit-ideas": (
        "edit",
        "llama-cpp",
        {"repair_rounds": 1, "explore": 0.2, "context_tokens": 5000, "precheck": True,
         "ideas": True},
    ),
    "proposers/guided-offers": (
        "guided",
        "llama-cpp",
        {"repair_rounds": 1, "explore": 0.2, "offers": 8, "keep": [], "share": False},
    ),
    "proposers/guided-share": (
        "guided",
        "llama-cpp",
        {"repair_rounds": 1, "explore": 0.2, "offers": 8, "keep": ["dense"], "share": True},
    ),
    "proposers/openevolve": ("external", None, {"peer": "openevolve"}),
}  # fmt: skip
"""Files written in schema 2 and the spec scripts/migrate_0_1_records.py rewrote each as: the
name the run was asked by and its settings (a field the file lacked: as such runs ran)."""


@pytest.mark.parametrize("name", sorted(MIGRATED_SPECS))
def test_a_migrated_file_holds_the_equivalent_spec(name):
    config = read_run_config(REPO / "results" / name)
    assert config is not None
    strategy, backend, options = MIGRATED_SPECS[name]
    assert config.proposer == ProposerSpec(strategy=strategy, backend=backend, options=options)


# ---------------------------------------------------------------------------------------------
# The sandbox's limits a run resumes under


def test_a_new_run_records_the_default_limits():
    from embedding_ttc.program_files.sandbox.limits import SandboxLimits
    from embedding_ttc.search.limits import run_limits, sandbox_limits

    limits = run_limits(None)
    assert limits == RunLimits(
        timeout_seconds=3600.0, timeout_covers="run", encode_texts_per_item=112.0, memory_gb=8
    )
    assert sandbox_limits(limits) == SandboxLimits()
    asked = run_limits(None, timeout_seconds=60, encode_texts_per_item=20)
    assert (asked.timeout_seconds, asked.encode_texts_per_item) == (60.0, 20.0)


def test_a_committed_run_resumes_under_the_limits_it_ran_with(tmp_path):
    from embedding_ttc.search.limits import run_limits, sandbox_limits

    recorded = committed(tmp_path)  # results/search: 600 s not counting encodes, 256 texts
    asked = recorded.model_copy(update={"limits": run_limits(recorded)})
    assert asked.limits == recorded.limits
    assert asked.limits is not None
    limits = sandbox_limits(asked.limits)
    assert (limits.timeout_covers, limits.encode_texts_per_item) == ("program", 256.0)
    asked.check_resume(recorded)


def test_a_run_resumes_under_its_recorded_limits_and_refuses_others(tmp_path):
    from embedding_ttc.search.limits import run_limits

    made = fixture(tmp_path).model_copy(
        update={"limits": run_limits(None, timeout_seconds=30, encode_texts_per_item=64)}
    )
    write_run_config(tmp_path, made)
    recorded = read_run_config(tmp_path)
    assert recorded is not None and recorded.limits == made.limits
    resumed = made.model_copy(update={"limits": run_limits(recorded)})
    assert resumed.limits == made.limits  # nothing asked: as recorded, not the defaults
    resumed.check_resume(recorded)
    other = made.model_copy(update={"limits": run_limits(recorded, timeout_seconds=60)})
    with pytest.raises(RunMismatchError, match=r"limits: run has .*'timeout_seconds': 30\.0"):
        other.check_resume(recorded)
