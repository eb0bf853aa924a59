"""search.json as a typed record: the committed ones read (schema 1 and 2 as schema 3), write
back as the same settings, resume under the options that made them, and a resume under other
settings is refused with the settings named."""

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


def committed(tmp_path: Path) -> RunConfig:
    shutil.copy(COMMITTED, tmp_path / RUN_CONFIG_FILE)
    config = read_run_config(tmp_path)
    assert config is not None
    return config


def test_the_committed_configuration_of_schema_1_reads_as_a_run_without_split_or_reference(
    tmp_path,
):
    config = committed(tmp_path)
    assert (config.encoder, config.proposer, config.model) == (
        "all-MiniLM-L6-v2",
        ProposerSpec(strategy="structural"),
        None,
    )
    assert str(config.proposer) == "structural"
    assert (config.split, config.reference, config.objective) == (None, None, "p0")
    assert len(config.tasks) == 10 and config.schema_version == 3
    out = tmp_path / "again"
    out.mkdir()
    write_run_config(out, config)
    body = json.loads((out / RUN_CONFIG_FILE).read_text())
    old = json.loads(COMMITTED.read_text())
    assert body == {
        **old,
        "schema_version": 3,
        "proposer": {"strategy": "structural", "backend": None, "options": {}},
        "split": None,
        "reference": None,
        "objective": "p0",
        "limits": None,  # recorded before the limits were: the search command derives them
    }
    assert read_run_config(out) == config


def test_an_objective_against_no_reference_is_refused(tmp_path):
    body = {**json.loads(COMMITTED.read_text()), "objective": "reference"}
    (tmp_path / RUN_CONFIG_FILE).write_text(json.dumps(body))
    with pytest.raises(RunConfigError, match="needs a reference program"):
        read_run_config(tmp_path)


def test_the_proposer_is_written_as_its_spec(tmp_path):
    config = committed(tmp_path).model_copy(update={"proposer": DRAFTING})
    write_run_config(tmp_path, config)
    body = json.loads((tmp_path / RUN_CONFIG_FILE).read_text())
    assert body["proposer"]["strategy"] == "draft" and body["proposer"]["backend"] == "openai"
    assert body["proposer"]["options"]["prompt"] == "compact"
    assert read_run_config(tmp_path) == config


def test_the_same_settings_resume(tmp_path):
    config = committed(tmp_path)
    config.check_resume(None)  # a new run directory
    config.check_resume(config.model_copy())


def test_other_settings_are_named_as_recorded_and_as_asked(tmp_path):
    recorded = committed(tmp_path)
    asked = recorded.model_copy(update={"seed": 3, "model": "gpt"})
    with pytest.raises(RunMismatchError) as caught:
        asked.check_resume(recorded)
    assert str(caught.value) == (
        "the run directory was made with other settings (model: run has None, asked 'gpt', "
        "seed: run has 0, asked 3); use a new --run-dir or the same options to resume"
    )


def test_another_proposer_is_a_mismatch(tmp_path):
    recorded = committed(tmp_path)
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
    body = {**json.loads(COMMITTED.read_text()), "surprise": 1}
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
    if isinstance(recorded, str):  # schema 2: the name the run was asked by
        assert str(spec) == recorded
    else:  # schema 3: the spec itself
        assert spec.model_dump(mode="json") == recorded


SCHEMA_2_SPECS = {
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
"""Schema-2 files and the spec each reads as (a field the file lacks: as such runs ran)."""


@pytest.mark.parametrize("name", sorted(SCHEMA_2_SPECS))
def test_a_schema_2_file_reads_as_the_equivalent_spec(name):
    config = read_run_config(REPO / "results" / name)
    assert config is not None
    strategy, backend, options = SCHEMA_2_SPECS[name]
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


def test_a_run_recorded_before_its_limits_resumes_under_the_limits_it_ran_with(tmp_path):
    from embedding_ttc.search.limits import run_limits, sandbox_limits

    recorded = committed(tmp_path)  # results/search: recorded without limits
    assert recorded.limits is None
    asked = recorded.model_copy(update={"limits": run_limits(recorded)})
    # The wall time did not count the encodes served, and the budget was 256 texts per item.
    assert asked.limits == RunLimits(
        timeout_seconds=600.0, timeout_covers="program", encode_texts_per_item=256.0, memory_gb=8
    )
    limits = sandbox_limits(asked.limits)
    assert (limits.timeout_covers, limits.encode_texts_per_item) == ("program", 256.0)
    asked.check_resume(recorded)  # the limits were not recorded: those derived resume
    # Once resumed, the file records them, and a later resume keeps them.
    write_run_config(tmp_path, asked)
    again = read_run_config(tmp_path)
    assert again is not None and again.limits == asked.limits
    assert run_limits(again) == asked.limits


def test_a_run_resumes_under_its_recorded_limits_and_refuses_others(tmp_path):
    from embedding_ttc.search.limits import run_limits

    made = committed(tmp_path).model_copy(
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
