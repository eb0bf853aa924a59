"""The ``search`` command's flags: each turned into the run's config, and the command wired.

The search itself is opened from a typed config (:mod:`embedding_ttc.search.open`), and its
tests do so; these are the command line's own: which spec, model and limits the flags ask,
and that the command runs a search and refuses a resume under other settings.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest

from embedding_ttc.cli.search import _config, _spec, add_search_commands
from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.evaluation.outcome import Status
from embedding_ttc.runs.config import (
    RUN_CONFIG_FILE,
    RunConfig,
    RunMismatchError,
    read_run_config,
)
from embedding_ttc.runs.ledger import Ledger
from embedding_ttc.search.backends.anthropic_chat import AnthropicBackend
from embedding_ttc.search.backends.openai_chat import OpenAIBackend
from embedding_ttc.search.guided.proposer import GuidedStructuralProposer
from embedding_ttc.search.open import default_model
from search.canned_server import CannedServer, Reply
from search.specs import spec
from search.test_drafting import BROKEN, FIXED, fence
from search.test_openevolve_peer import _proposers_benchmark

REPO = Path(__file__).resolve().parents[1]
COMMITTED = REPO / "results" / "search" / RUN_CONFIG_FILE


def committed(tmp_path: Path) -> RunConfig:
    shutil.copy(COMMITTED, tmp_path / RUN_CONFIG_FILE)
    config = read_run_config(tmp_path)
    assert config is not None
    return config


# --- from tests/runs/test_run_config.py


def test_the_search_command_refuses_to_resume_under_other_settings(tmp_path, capsys):
    from embedding_ttc.cli import main

    committed(tmp_path)
    code = main(
        [
            *("search", "--run-dir", str(tmp_path), "--seed", "5", "--generations", "0"),
            *("--validation-share", "0", "--reference", "none"),
        ]
    )
    assert code == 2
    assert "(seed: run has 0, asked 5)" in capsys.readouterr().err
    assert (tmp_path / RUN_CONFIG_FILE).read_bytes() == COMMITTED.read_bytes()  # untouched


GUIDED = REPO / "results" / "proposers" / "archive" / "guided-2026-11-24"
"""A committed guided run recorded before the local model's name was."""


def test_a_local_run_records_its_model_and_a_run_made_before_resumes_under_the_default(
    tmp_path,
):

    from embedding_ttc.cli.search import _config, add_search_commands
    from embedding_ttc.llm.gguf import DEFAULT_LLM

    def asked(*argv: str) -> RunConfig:
        parser = argparse.ArgumentParser()
        add_search_commands(parser.add_subparsers())
        args = parser.parse_args(["search", "--run-dir", "x", *argv])
        recorded = read_run_config(GUIDED)
        assert recorded is not None
        return _config(args, recorded.tasks)

    options = ("--proposer", "llama-cpp", "--llm-mode", "guided", "--guided-offers", "0",
               "--no-guided-share", "--objective", "reference")  # fmt: skip
    default = asked(*options)
    assert default.model == DEFAULT_LLM
    assert asked(*options, "--llm-model", "qwen2.5-coder-0.5b").model == "qwen2.5-coder-0.5b"
    assert asked("--proposer", "structural").model is None
    # The archived guided run was recorded before the local model was: it resumes as made.
    recorded = read_run_config(GUIDED)
    assert recorded is not None and recorded.model is None
    default.check_resume(recorded, default_model=DEFAULT_LLM)
    other = asked(*options, "--llm-model", "qwen2.5-coder-0.5b")
    with pytest.raises(RunMismatchError, match=r"model: run has 'qwen2\.5-coder-1\.5b'"):
        other.check_resume(recorded, default_model=DEFAULT_LLM)


@pytest.mark.parametrize("mode", ["draft", "edit", "edit-ideas", "guided", "guided-share"])
def test_the_committed_proposer_runs_resume_under_the_options_that_made_them(mode):

    bench = _proposers_benchmark()
    run = REPO / "results" / "proposers" / mode
    recorded = read_run_config(run)
    assert recorded is not None
    parser = argparse.ArgumentParser()
    add_search_commands(parser.add_subparsers())
    argv = bench.command(mode, 20, run, "qwen2.5-coder-1.5b")
    args = parser.parse_args(argv[argv.index("search") :])
    asked = _config(args, recorded.tasks)
    asked.check_resume(recorded, default_model(args.proposer))
    other = parser.parse_args([*argv[argv.index("search") :], "--repair-rounds", "2"])
    with pytest.raises(RunMismatchError, match="proposer"):
        _config(other, recorded.tasks).check_resume(recorded, default_model(other.proposer))


# --- from tests/search/test_drafting.py


def search_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_search_commands(parser.add_subparsers())
    return parser.parse_args(["search", "--run-dir", "x", *argv])


def test_cli_drafting_defaults():
    assert _spec(search_args("--proposer", "llama-cpp")) == spec(
        "draft", "llama-cpp", drafts=3, repair_rounds=1, prompt="compact", precheck=True
    )
    single = spec("draft", "openai")  # one draft of the full prompt: the single draft
    assert _spec(search_args("--proposer", "openai")) == single
    assert single.options == {
        "drafts": 1, "repair_rounds": 0, "prompt": "full", "context_tokens": 3000,
        "precheck": False,
    }  # fmt: skip
    assert _spec(search_args("--proposer", "structural")) == spec("structural")
    assert _spec(search_args("--proposer", "openai", "--drafts", "2")) == spec(
        "draft", "openai", drafts=2, repair_rounds=0, prompt="full", precheck=True
    )
    options = _spec(search_args("--proposer", "llama-cpp", "--no-precheck", "--drafts", "1"))
    assert not options.options["precheck"] and options.options["drafts"] == 1
    assert _spec(search_args("--proposer", "anthropic", "--precheck")) != spec("draft", "anthropic")
    with pytest.raises(EmbeddingTTCError, match="need an LLM proposer"):
        _spec(search_args("--proposer", "structural", "--prompt", "compact"))


def test_the_search_command_wires_drafting(tmp_path: Path, packaged_datasets, capsys):
    from embedding_ttc.cli import main

    run_dir = tmp_path / "run"
    with CannedServer([Reply(fence(BROKEN)), Reply(fence(FIXED))]) as server:
        code = main(
            [
                "search",
                "--proposer",
                "openai",
                "--model",
                "canned",
                "--base-url",
                server.openai_base_url,
                "--task",
                "aila_statutes",
                "--generations",
                "1",
                "--encoder",
                "tokenlearn-static-64",
                "--run-dir",
                str(run_dir),
                "--data-dir",
                str(packaged_datasets),
                "--cache-dir",
                str(tmp_path / "cache"),
                "--drafts",
                "2",
                "--prompt",
                "compact",
            ]
        )
        prompts = server.prompts
    assert code == 0, capsys.readouterr().err
    g1 = Ledger(run_dir).records[1]
    assert g1.status == Status.OK and len(g1.attempts) == 1
    assert prompts[0] is not None and "## Helpers" in prompts[0]
    config = json.loads((run_dir / "search.json").read_text())
    assert config["proposer"] == {
        "strategy": "draft",
        "backend": "openai",
        "options": {
            "drafts": 2,
            "repair_rounds": 0,
            "prompt": "compact",
            "context_tokens": 3000,
            "precheck": True,
        },
    }
    recorded = read_run_config(run_dir)
    assert recorded is not None and recorded.proposer.options["drafts"] == 2
    assert str(recorded.proposer) == "openai"


# --- from tests/search/test_editing.py


def test_the_command_line_selects_and_records_the_edit_mode():

    def args(*argv: str) -> argparse.Namespace:
        parser = argparse.ArgumentParser()
        add_search_commands(parser.add_subparsers())
        return parser.parse_args(["search", "--run-dir", "x", *argv])

    edit = args("--proposer", "llama-cpp", "--llm-mode", "edit")
    assert _spec(edit) == spec("edit", "llama-cpp", ideas=True)
    assert _spec(args("--proposer", "llama-cpp")).strategy == "draft"  # drafting by default
    options = _spec(args("--proposer", "openai", "--llm-mode", "edit", "--repair-rounds", "0"))
    assert options == spec("edit", "openai", repair_rounds=0, ideas=True)
    plain = args("--proposer", "llama-cpp", "--llm-mode", "edit", "--no-edit-ideas")
    assert _spec(plain) == spec("edit", "llama-cpp")
    guided = _spec(args("--proposer", "llama-cpp", "--llm-mode", "guided"))
    assert "ideas" not in guided.options  # the guided proposer writes no edit
    # A run recorded before the ideas existed resumes without them, as it ran.
    recorded = RunConfig.model_validate_json(
        (REPO / "results" / "proposers" / "edit" / "search.json").read_text()
    )
    assert recorded.proposer.strategy == "edit" and recorded.proposer.options["ideas"] is False
    config = RunConfig(
        suite="discovery", tasks=["a"], encoder="e", proposer=options, model=None, seed=0,
        shortlist=None,
    )  # fmt: skip
    assert RunConfig.model_validate_json(config.model_dump_json()) == config
    with pytest.raises(EmbeddingTTCError, match="needs an LLM proposer"):
        _spec(args("--proposer", "structural", "--llm-mode", "edit"))
    with pytest.raises(EmbeddingTTCError, match="drafting options"):
        _spec(args("--proposer", "openai", "--llm-mode", "edit", "--drafts", "2"))


# --- from tests/search/test_guided.py


def test_the_command_line_builds_the_guided_proposer():

    from embedding_ttc.search.strategies import Collaborators, build_proposer
    from embedding_ttc.search.strategies.guided import GUIDED_OFFERS

    parser = argparse.ArgumentParser()
    add_search_commands(parser.add_subparsers())
    argv = ["search", "--run-dir", "x", "--proposer", "openai", "--llm-mode", "guided"]
    args = parser.parse_args(argv)
    options = _spec(args)
    assert options == spec("guided", "openai", offers=GUIDED_OFFERS, share=True)
    every = _spec(parser.parse_args([*argv, "--guided-offers", "0", "--no-guided-share"]))
    assert every == spec("guided", "openai", offers=0)
    with pytest.raises(EmbeddingTTCError, match="at least 0"):
        _spec(parser.parse_args([*argv, "--guided-offers", "-1"]))
    edit_argv = ["search", "--run-dir", "x", "--proposer", "openai", "--llm-mode", "edit"]
    with pytest.raises(EmbeddingTTCError, match="guided's option, not edit's"):
        _spec(parser.parse_args([*edit_argv, "--guided-offers", "4"]))
    with pytest.raises(EmbeddingTTCError, match="--guided-share is --llm-mode guided's option"):
        _spec(parser.parse_args([*edit_argv, "--guided-share"]))
    assert "share" not in _spec(parser.parse_args(edit_argv)).options
    with pytest.raises(EmbeddingTTCError, match="not --llm-mode guided's"):
        _spec(parser.parse_args([*argv, "--drafts", "2"]))
    with CannedServer() as canned:
        anthropic = AnthropicBackend(base_url=canned.url, max_retries=0)
        refused = options.model_copy(update={"backend": "anthropic"})
        with pytest.raises(EmbeddingTTCError, match="needs a backend that constrains JSON"):
            build_proposer(refused, anthropic, Collaborators())
        openai = OpenAIBackend(model="m", base_url=canned.openai_base_url, max_retries=0)
        built = build_proposer(options, openai, Collaborators())
        assert isinstance(built, GuidedStructuralProposer)


def test_the_command_line_records_kept_channels_and_suggests_names():

    from embedding_ttc.search.strategies import Collaborators, build_proposer
    from embedding_ttc.search.strategies.guided import GUIDED_OFFERS

    parser = argparse.ArgumentParser()
    add_search_commands(parser.add_subparsers())
    argv = ["search", "--run-dir", "x", "--proposer", "openai", "--llm-mode", "guided"]
    anchored = _spec(parser.parse_args([*argv, "--guided-keep", "dense"]))
    assert anchored == spec("guided", "openai", offers=GUIDED_OFFERS, keep=("dense",), share=True)
    with pytest.raises(EmbeddingTTCError, match="'dens' is not a channel; did you mean dense"):
        _spec(parser.parse_args([*argv, "--guided-keep", "dens"]))
    edit_argv = ["search", "--run-dir", "x", "--proposer", "openai", "--llm-mode", "edit"]
    with pytest.raises(EmbeddingTTCError, match="guided's option, not edit's"):
        _spec(parser.parse_args([*edit_argv, "--guided-keep", "dense"]))
    inner = OpenAIBackend(model="m", base_url="http://127.0.0.1:9", max_retries=0)
    proposer = build_proposer(anchored, inner, Collaborators(seed=1))
    assert isinstance(proposer, GuidedStructuralProposer) and proposer.keep == ("dense",)


# --- from tests/search/test_openevolve_peer.py


def test_every_configuration_of_the_proposers_benchmark_is_a_search_command_line():

    bench = _proposers_benchmark()
    parser = argparse.ArgumentParser()
    add_search_commands(parser.add_subparsers())
    modes = {}
    for mode in bench.LLM_MODES:
        argv = bench.command(mode, 20, Path("run"), "qwen2.5-coder-1.5b")
        assert argv[1:4] == ["-m", "embedding_ttc.cli", "search"]
        modes[mode] = _spec(parser.parse_args(argv[3:]))
    assert {mode: spec.strategy for mode, spec in modes.items()} == {
        "guided": "guided", "guided-offers": "guided", "guided-anchored": "guided",
        "guided-share": "guided", "edit-ideas": "edit", "edit": "edit", "draft": "draft",
    }  # fmt: skip
    assert {spec.backend for spec in modes.values()} == {"llama-cpp"}
    assert modes["guided"].options["offers"] == 0
    assert modes["guided-anchored"].options["keep"] == ["dense"]
    assert modes["guided-offers"].options["keep"] == []
    assert not modes["edit"].options["ideas"]
