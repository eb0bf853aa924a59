"""The strategy registry's contract: every strategy over every backend kind (and none).

Each pair is built from a :class:`ProposerSpec` through the registry, as ``search`` builds it;
the LLM backends answer from the canned server (openai, anthropic) or the fake llama.cpp
module. A pair the registry refuses (structural and external take no backend; draft, edit and
guided need one; guided needs a backend that constrains JSON) is refused with an error naming
it. The strategies' own behaviour is tested beside each (test_drafting.py, test_editing.py,
test_guided.py, test_structural.py, test_external.py).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from embedding_ttc.runs.config import ProposerSpec
from embedding_ttc.search.backends import ChatBackend, make_backend
from embedding_ttc.search.external import HandedOver
from embedding_ttc.search.novelty import structure
from embedding_ttc.search.proposer import Proposer
from embedding_ttc.search.strategies import (
    STRATEGIES,
    Collaborators,
    StrategyError,
    build_proposer,
    get_strategy,
)
from embedding_ttc.search.strategies.base import proposer_label

from .canned_server import CannedServer, Reply
from .test_prompt import small_state
from .test_proposers import REPLY, FakeLlama, fake_llama_cpp  # noqa: F401 (a fixture)

PROGRAM = REPLY.split("```python\n")[1].split("```")[0]

REPLIES: dict[str, str] = {
    "draft": REPLY,
    "edit": (
        "<<<<<<< SEARCH\n    return zscore_cols(S, mask)\n=======\n"
        "    return zscore_cols(S, mask) - 0.5 * zscore_cols(-S, mask)\n>>>>>>> REPLACE\n"
        "Novelty: subtracts the reversed column z-score.\nHypothesis: it sharpens hubs.\n"
    ),
    "guided": json.dumps(
        {
            "hypothesis": "consensus helps",
            "edit": {"op": "add_channel", "channel": "consensus", "normalisation": "local"},
            "share": 0.8,
        }
    ),
}
"""What the model answers, per strategy that asks one (the others write without a model)."""


def _hand_over(proposer: Proposer) -> None:
    assert isinstance(proposer, HandedOver)
    proposer.source = PROGRAM


PREPARE: dict[str, Callable[[Proposer], None]] = {"external": _hand_over}
"""What happens before a proposal, per strategy: a peer hands its program over."""

BACKEND_KINDS = (None, "openai", "anthropic", "llama-cpp")

REFUSED: dict[tuple[str, str | None], str] = {
    **{("structural", b): "takes no backend" for b in BACKEND_KINDS if b},
    **{("external", b): "takes no backend" for b in BACKEND_KINDS if b},
    **{(s, None): "needs a chat backend" for s in ("draft", "edit", "guided")},
    ("guided", "anthropic"): "needs a backend that constrains JSON",
}
"""Every refused pair, with what the error says."""


def test_every_strategy_is_registered():
    assert sorted(STRATEGIES.names()) == ["draft", "edit", "external", "guided", "structural"]


def make(kind: str | None, server: CannedServer, tmp_path: Path) -> ChatBackend | None:
    """The backend of ``kind`` (``None``: no backend), pointed at the canned answers."""
    options: dict[str, dict[str, object]] = {
        "openai": {"model": "canned", "base_url": server.openai_base_url, "max_retries": 0},
        "anthropic": {"base_url": server.url, "max_retries": 0},
        "llama-cpp": {"model_path": tmp_path / "tiny.gguf"},
    }
    (tmp_path / "tiny.gguf").write_bytes(b"GGUF")
    return None if kind is None else make_backend(kind, seed=3, **options[kind])


@pytest.mark.parametrize("backend_kind", BACKEND_KINDS)
@pytest.mark.parametrize("strategy", STRATEGIES.names())
def test_strategy_contract(strategy, backend_kind, tmp_path, fake_llama_cpp):  # noqa: F811
    with CannedServer() as server:
        backend = make(backend_kind, server, tmp_path)
        spec = ProposerSpec(strategy=strategy, backend=backend_kind)
        given = Collaborators(seed=3)
        refused = REFUSED.get((strategy, backend_kind))
        if refused is not None:
            with pytest.raises(StrategyError, match=refused):
                build_proposer(spec, backend, given)
            return
        reply = REPLIES.get(strategy, "")
        server.enqueue(Reply(reply))
        FakeLlama.reply = reply
        proposer = build_proposer(spec, backend, given)
        PREPARE.get(strategy, lambda p: None)(proposer)
        assert isinstance(proposer, Proposer)
        assert proposer.name == proposer_label(strategy, backend_kind)
        proposal = proposer.propose(small_state())
        if backend_kind == "llama-cpp":
            prompts = [c["messages"][-1]["content"] for c in FakeLlama.instances[-1].calls]
        else:
            prompts = server.prompts
    if backend is not None:  # the strategy's prompt rendered and reached the model
        assert prompts and prompts[0] and "program" in prompts[0]
    assert proposal.proposer == proposer.name and proposal.attempts == ()
    assert proposal.source is not None and "def program(" in proposal.source
    structure(proposal.source)  # parses
    usage = proposal.usage
    assert usage.seconds >= 0 and usage.cost_usd >= 0
    assert (usage.tokens_in > 0 and usage.tokens_out > 0) == (backend is not None)


@pytest.mark.parametrize("strategy", STRATEGIES.names())
def test_options_round_trip_and_name_a_bad_field(strategy):
    chosen = get_strategy(strategy)
    default = chosen.options()
    assert chosen.read_options(chosen.write_options(default)) == default
    assert chosen.read_options({}) == default  # missing fields take the record's defaults
    with pytest.raises(StrategyError, match="no_such_option"):
        chosen.read_options({"no_such_option": 1})


def _ranged_fields(strategy: str) -> list[tuple[str, float, float | None]]:
    record = get_strategy(strategy).options
    return [
        (f.name, *f.metadata["range"]) for f in dataclasses.fields(record) if "range" in f.metadata
    ]


@pytest.mark.parametrize("strategy", STRATEGIES.names())
def test_every_ranged_option_is_checked_once_by_its_record(strategy):
    chosen = get_strategy(strategy)
    for name, low, high in _ranged_fields(strategy):
        for bad in [low - 1, *([] if high is None else [high + 1])]:
            with pytest.raises(StrategyError, match=f"{name} must be"):
                chosen.options(**{name: bad})  # in code
            with pytest.raises(StrategyError, match=f"the {strategy} strategy's options .*{name}"):
                chosen.read_options({name: bad})  # from JSON (search.json)
        chosen.options(**{name: low})  # the bound itself is allowed


def test_the_llm_strategies_range_their_counts():
    assert {s: [n for n, *_ in _ranged_fields(s)] for s in ("draft", "edit", "guided")} == {
        "draft": ["drafts", "repair_rounds", "context_tokens"],
        "edit": ["repair_rounds", "explore", "context_tokens"],
        "guided": ["repair_rounds", "explore", "offers"],
    }


def test_a_wrongly_typed_option_is_named():
    with pytest.raises(StrategyError, match="drafts"):
        get_strategy("draft").read_options({"drafts": "many"})
    keep = get_strategy("guided").read_options({"keep": ["dense"]})
    assert keep.keep == ("dense",)
