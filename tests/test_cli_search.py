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

from embedding_ttc.cli import main
from embedding_ttc.cli.search import _config, _spec, add_search_commands, strategy_flags
from embedding_ttc.errors import EmbeddingTTCError, UnknownNameError
from embedding_ttc.programs.outcome import Status
from embedding_ttc.runs.config import (
    RUN_CONFIG_FILE,
    RunConfig,
    RunMismatchError,
    read_run_config,
)
from embedding_ttc.runs.ledger import Ledger
from embedding_ttc.search.backends.anthropic_chat import AnthropicBackend
from embedding_ttc.search.backends.openai_chat import OpenAIBackend
from embedding_ttc.search.open import default_model
from embedding_ttc.search.strategies import StrategyError
from embedding_ttc.search.strategies.catalog import REGISTERED
from embedding_ttc.search.strategies.guided.proposer import GuidedStructuralProposer
from search.canned_server import CannedServer, Reply
from search.specs import spec
from search.test_drafting import BROKEN, FIXED, fence
from search.test_openevolve_peer import _proposers_benchmark

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "runs" / "data" / RUN_CONFIG_FILE
"""A configuration of the current schema: the committed run's settings, today's limits."""


def fixture(tmp_path: Path) -> RunConfig:
    shutil.copy(FIXTURE, tmp_path / RUN_CONFIG_FILE)
    config = read_run_config(tmp_path)
    assert config is not None
    return config


def search_args(*argv: str) -> argparse.Namespace:
    """The ``search`` command's options as parsed (the run directory given)."""
    parser = argparse.ArgumentParser()
    add_search_commands(parser.add_subparsers())
    return parser.parse_args(["search", "--run-dir", "x", *argv])


# ---------------------------------------------------------------------------------------------
# Resuming


def test_the_search_command_refuses_to_resume_under_other_settings(tmp_path, capsys):
    fixture(tmp_path)
    code = main(
        [
            *("search", "--run-dir", str(tmp_path), "--seed", "5", "--generations", "0"),
            *("--validation-share", "0", "--reference", "none"),
        ]
    )
    assert code == 2
    assert "(seed: run has 0, asked 5)" in capsys.readouterr().err
    assert (tmp_path / RUN_CONFIG_FILE).read_bytes() == FIXTURE.read_bytes()  # untouched


GUIDED = REPO / "results" / "proposers" / "guided"


def test_a_local_run_records_its_model_and_a_run_made_before_resumes_under_the_default():
    from embedding_ttc.llm.gguf import DEFAULT_LLM

    made = read_run_config(GUIDED)
    assert made is not None and made.model == "qwen2.5-coder-1.5b"

    def asked(*argv: str) -> RunConfig:
        return _config(search_args(*argv), made.tasks, recorded=made)

    options = ("--strategy", "guided", "--backend", "llama-cpp", "--guided-offers", "0",
               "--no-guided-share", "--objective", "reference")  # fmt: skip
    default = asked(*options)
    assert default.model == DEFAULT_LLM
    assert asked(*options, "--llm-model", "qwen2.5-coder-0.5b").model == "qwen2.5-coder-0.5b"
    assert asked("--strategy", "structural").model is None
    # A run recorded with no model name used the proposer's default: it resumes under it.
    recorded = made.model_copy(update={"model": None})
    default.check_resume(recorded, default_model=DEFAULT_LLM)
    other = asked(*options, "--llm-model", "qwen2.5-coder-0.5b")
    with pytest.raises(RunMismatchError, match=r"model: run has 'qwen2\.5-coder-1\.5b'"):
        other.check_resume(made, default_model=DEFAULT_LLM)


@pytest.mark.parametrize("mode", ["draft", "edit", "edit-ideas", "guided", "guided-share"])
def test_the_committed_proposer_runs_resume_under_the_options_that_made_them(mode):
    bench = _proposers_benchmark()
    run = REPO / "results" / "proposers" / mode
    recorded = read_run_config(run)
    assert recorded is not None
    argv = bench.command(mode, 20, run, "qwen2.5-coder-1.5b")
    args = search_args(*argv[argv.index("search") + 1 :])
    asked = _config(args, recorded.tasks, recorded=recorded)
    asked.check_resume(recorded, default_model(args.backend))
    other = search_args(*argv[argv.index("search") + 1 :], "--repair-rounds", "2")
    with pytest.raises(RunMismatchError, match="proposer"):
        _config(other, recorded.tasks, recorded=recorded).check_resume(
            recorded, default_model(other.backend)
        )


def test_every_configuration_of_the_proposers_benchmark_is_a_search_command_line():
    bench = _proposers_benchmark()
    modes = {}
    for mode in bench.LLM_MODES:
        argv = bench.command(mode, 20, Path("run"), "qwen2.5-coder-1.5b")
        assert argv[1:4] == ["-m", "embedding_ttc.cli", "search"]
        modes[mode] = _spec(search_args(*argv[4:]))
    assert {mode: spec.strategy for mode, spec in modes.items()} == {
        "guided": "guided", "guided-offers": "guided", "guided-anchored": "guided",
        "guided-share": "guided", "edit-ideas": "edit", "edit": "edit", "draft": "draft",
    }  # fmt: skip
    assert {spec.backend for spec in modes.values()} == {"llama-cpp"}
    assert modes["guided"].options["offers"] == 0
    assert modes["guided-anchored"].options["keep"] == ["dense"]
    assert modes["guided-offers"].options["keep"] == []
    assert not modes["edit"].options["ideas"]


# ---------------------------------------------------------------------------------------------
# --strategy and --backend


def test_the_strategy_defaults_to_structural_and_to_draft_over_a_backend():
    assert _spec(search_args()) == spec("structural")
    assert _spec(search_args("--backend", "openai")) == spec("draft", "openai")
    assert _spec(search_args("--strategy", "edit", "--backend", "openai")).strategy == "edit"


def test_a_strategy_and_a_backend_that_do_not_go_together_are_refused():
    with pytest.raises(EmbeddingTTCError, match="structural strategy takes no --backend"):
        _spec(search_args("--strategy", "structural", "--backend", "openai"))
    with pytest.raises(EmbeddingTTCError, match="edit strategy needs a --backend"):
        _spec(search_args("--strategy", "edit"))
    with pytest.raises(UnknownNameError, match="Did you mean: openai"):
        _spec(search_args("--backend", "opnai"))


@pytest.mark.parametrize(
    ("old", "new"), [("--proposer", "--strategy and --backend"), ("--llm-mode", "--strategy")]
)
def test_the_options_of_before_are_refused_naming_the_new_ones(old, new, capsys):
    with pytest.raises(SystemExit) as exited:
        search_args(old, "llama-cpp")
    assert exited.value.code == 2
    assert f"{old} is gone: name {new}" in capsys.readouterr().err


def test_cli_drafting_defaults():
    assert _spec(search_args("--backend", "llama-cpp")) == spec(
        "draft", "llama-cpp", drafts=3, repair_rounds=1, prompt="compact", precheck=True
    )
    single = spec("draft", "openai")  # one draft of the full prompt: the single draft
    assert _spec(search_args("--backend", "openai")) == single
    assert single.options == {
        "drafts": 1, "repair_rounds": 0, "prompt": "full", "context_tokens": 3000,
        "precheck": False,
    }  # fmt: skip
    assert _spec(search_args("--backend", "openai", "--drafts", "2")) == spec(
        "draft", "openai", drafts=2, repair_rounds=0, prompt="full", precheck=True
    )
    options = _spec(search_args("--backend", "llama-cpp", "--no-precheck", "--drafts", "1"))
    assert not options.options["precheck"] and options.options["drafts"] == 1
    assert _spec(search_args("--backend", "anthropic", "--precheck")) != spec("draft", "anthropic")
    with pytest.raises(EmbeddingTTCError, match="--prompt is an option of the draft strategy"):
        _spec(search_args("--strategy", "structural", "--prompt", "compact"))
    with pytest.raises(StrategyError, match="drafts must be at least 1, not 0"):
        _spec(search_args("--backend", "openai", "--drafts", "0"))


def test_the_search_command_wires_drafting(tmp_path: Path, packaged_datasets, capsys):
    run_dir = tmp_path / "run"
    with CannedServer([Reply(fence(BROKEN)), Reply(fence(FIXED))]) as server:
        code = main(
            [
                *("search", "--strategy", "draft", "--backend", "openai", "--model", "canned"),
                *("--base-url", server.openai_base_url, "--task", "aila_statutes"),
                *("--generations", "1", "--encoder", "tokenlearn-static-64"),
                *("--run-dir", str(run_dir), "--data-dir", str(packaged_datasets)),
                *("--cache-dir", str(tmp_path / "cache"), "--drafts", "2", "--prompt", "compact"),
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


def test_the_command_line_selects_and_records_the_edit_strategy():
    edit = search_args("--strategy", "edit", "--backend", "llama-cpp")
    assert _spec(edit) == spec("edit", "llama-cpp") == spec("edit", "llama-cpp", ideas=True)
    options = _spec(
        search_args("--strategy", "edit", "--backend", "openai", "--repair-rounds", "0")
    )
    assert options == spec("edit", "openai", repair_rounds=0, ideas=True)
    plain = search_args("--strategy", "edit", "--backend", "llama-cpp", "--no-edit-ideas")
    assert _spec(plain) == spec("edit", "llama-cpp", ideas=False)
    guided = _spec(search_args("--strategy", "guided", "--backend", "llama-cpp"))
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
    with pytest.raises(EmbeddingTTCError, match="--drafts is an option of the draft strategy"):
        _spec(search_args("--strategy", "edit", "--backend", "openai", "--drafts", "2"))
    with pytest.raises(StrategyError, match="repair_rounds must be at least 0"):
        _spec(search_args("--strategy", "edit", "--backend", "openai", "--repair-rounds", "-1"))


def test_the_command_line_builds_the_guided_proposer():
    from embedding_ttc.search.strategies import Collaborators, build_proposer
    from embedding_ttc.search.strategies.guided import GUIDED_OFFERS

    argv = ("--strategy", "guided", "--backend", "openai")
    options = _spec(search_args(*argv))
    assert options == spec("guided", "openai") == spec("guided", "openai", offers=GUIDED_OFFERS)
    every = _spec(search_args(*argv, "--guided-offers", "0", "--no-guided-share"))
    assert every == spec("guided", "openai", offers=0, share=False)
    with pytest.raises(StrategyError, match="offers must be at least 0"):
        _spec(search_args(*argv, "--guided-offers", "-1"))
    edit_argv = ("--strategy", "edit", "--backend", "openai")
    with pytest.raises(EmbeddingTTCError, match="of the guided strategy, not of edit"):
        _spec(search_args(*edit_argv, "--guided-offers", "4"))
    with pytest.raises(EmbeddingTTCError, match="--guided-share is an option of the guided"):
        _spec(search_args(*edit_argv, "--guided-share"))
    assert "share" not in _spec(search_args(*edit_argv)).options
    with pytest.raises(EmbeddingTTCError, match="of the draft strategy, not of guided"):
        _spec(search_args(*argv, "--drafts", "2"))
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

    argv = ("--strategy", "guided", "--backend", "openai")
    anchored = _spec(search_args(*argv, "--guided-keep", "dense"))
    assert anchored == spec("guided", "openai", offers=GUIDED_OFFERS, keep=("dense",), share=True)
    with pytest.raises(StrategyError, match="'dens' is not a channel; did you mean dense"):
        _spec(search_args(*argv, "--guided-keep", "dens"))
    edit_argv = ("--strategy", "edit", "--backend", "openai")
    with pytest.raises(EmbeddingTTCError, match="of the guided strategy, not of edit"):
        _spec(search_args(*edit_argv, "--guided-keep", "dense"))
    inner = OpenAIBackend(model="m", base_url="http://127.0.0.1:9", max_retries=0)
    proposer = build_proposer(anchored, inner, Collaborators(seed=1))
    assert isinstance(proposer, GuidedStructuralProposer) and proposer.keep == ("dense",)


def test_the_external_strategy_is_not_chosen_on_the_command_line():
    with pytest.raises(SystemExit):
        search_args("--strategy", "external")


# ---------------------------------------------------------------------------------------------
# Every strategy's flags, read back from its spec

EXAMPLES: dict[str, object] = {
    "--drafts": 2,
    "--repair-rounds": 2,
    "--prompt": "compact",
    "--context-tokens": 4000,
    "--precheck": False,
    "--edit-ideas": False,
    "--guided-offers": 3,
    "--guided-keep": ["dense", "bm25"],
    "--guided-share": False,
}
"""A value of each strategy option that is not its default (what the round trip gives)."""


@pytest.mark.parametrize(
    "strategy", [s for s in REGISTERED if s.from_flags is not None], ids=lambda s: s.name
)
def test_every_strategys_flags_round_trip_to_its_spec(strategy):
    backend = () if strategy.needs == "none" else ("--backend", "llama-cpp")
    for flag in strategy.flags:
        value = EXAMPLES[flag.option]
        argv = ("--strategy", strategy.name, *backend, *flag.argv(value))
        made = _spec(search_args(*argv))
        assert made.strategy == strategy.name and made.options[flag.field] == value, flag
        assert strategy.write_options(strategy.read_options(made.options)) == made.options
    assert set(EXAMPLES) >= {f.option for f in strategy_flags()}  # every flag has an example
