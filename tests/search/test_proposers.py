"""Chat backends against a canned HTTP server, llama.cpp through a fake module, and the backend
registry's contract. A backend is driven here through the single draft (one full-prompt
request, what an API backend's run does by default); every strategy over every backend is
test_strategies.py's contract."""

from __future__ import annotations

import sys
import time
import types
from pathlib import Path
from typing import ClassVar

import pytest

from embedding_ttc.errors import EmbeddingTTCError, MissingExtraError, UnknownNameError
from embedding_ttc.search.backends import BACKENDS, ChatBackend, make_backend
from embedding_ttc.search.backends.anthropic_chat import AnthropicBackend
from embedding_ttc.search.backends.base import price_usd
from embedding_ttc.search.backends.llama_cpp import LlamaCppBackend
from embedding_ttc.search.backends.openai_chat import OpenAIBackend
from embedding_ttc.search.prompts.full import render_prompt
from embedding_ttc.search.proposer import ProposerConfigError, ProposerError, resolve_parent
from embedding_ttc.search.strategies.draft.single import SingleDraftProposer

from .canned_server import CannedServer, Reply, hang, http_error, malformed_json
from .test_prompt import small_state

PROGRAM = '''\
"""Blend: S plus its column z-score.

Novelty: adds a per-document z-score to the cosine.
Hypothesis: hubs lose their head start on every task.
Parent: g1
"""

from embedding_ttc.programs.primitives.scores import zscore_cols


def program(Q, D, S, ctx):
    return S + zscore_cols(S)
'''
REPLY = "Root cause: g0002 read a file.\n\n```python\n" + PROGRAM + "```\nDone.\n"

LLM_ENV = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "EMBEDDING_TTC_OPENAI_BASE_URL",
    "EMBEDDING_TTC_OPENAI_MODEL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
)


@pytest.fixture(autouse=True)
def _no_llm_environment(monkeypatch: pytest.MonkeyPatch):
    """No real key or endpoint from the developer's shell may leak into a test."""
    for name in LLM_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture()
def server():
    with CannedServer() as canned:
        yield canned


def openai_proposer(server: CannedServer, **options) -> SingleDraftProposer:
    defaults = {"model": "canned", "base_url": server.openai_base_url, "api_key": "test-key"}
    backend = OpenAIBackend(**{**defaults, "timeout": 5.0, "max_retries": 0, **options})
    return SingleDraftProposer(backend)


# --------------------------------------------------------------------------------------------
# OpenAI-compatible backend


def test_openai_valid_reply(server):
    state = small_state()
    server.enqueue(Reply(REPLY, tokens_in=1500, tokens_out=400, model="gpt-4o-2024-08-06"))
    proposal = openai_proposer(server, model="gpt-4o").propose(state)
    assert proposal.source == PROGRAM
    assert proposal.novelty == "adds a per-document z-score to the cosine."
    assert proposal.hypothesis == "hubs lose their head start on every task."
    assert proposal.parent_id == "g0001"  # "g1" resolved against the history
    assert proposal.proposer == "draft:openai" and proposal.raw_reply == REPLY
    usage = proposal.usage
    assert (usage.model, usage.tokens_in, usage.tokens_out) == ("gpt-4o-2024-08-06", 1500, 400)
    assert usage.cost_usd == pytest.approx((1500 * 2.50 + 400 * 10.00) / 1e6)
    assert usage.seconds > 0
    assert server.prompts == [render_prompt(state)]
    (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer test-key"
    body = request.body
    assert body["model"] == "gpt-4o" and body["messages"][0]["role"] == "user"
    assert body["max_tokens"] > 0 and body["seed"] == state.generation  # a local server
    assert "temperature" not in body and "max_completion_tokens" not in body


def test_openai_prose_without_code_is_a_proposal_without_source(server):
    server.enqueue(Reply("I would try Rocchio feedback.\nNovelty: feedback rounds."))
    proposal = openai_proposer(server).propose(small_state())
    assert proposal.source is None
    assert proposal.novelty == "feedback rounds."
    assert proposal.usage.tokens_in == 1234


def test_openai_retries_a_500_then_succeeds(server):
    server.enqueue(http_error(500), Reply(REPLY))
    proposal = openai_proposer(server, max_retries=2).propose(small_state())
    assert proposal.source == PROGRAM
    assert len(server.requests) == 2


def test_openai_persistent_500_is_a_proposer_error(server):
    server.enqueue(*[http_error(500)] * 3)
    with pytest.raises(ProposerError, match="500") as info:
        openai_proposer(server, max_retries=2).propose(small_state())
    assert len(server.requests) == 3
    assert info.value.usage is not None and info.value.usage.model == "canned"
    assert isinstance(info.value, EmbeddingTTCError)


def test_openai_rate_limit_after_retries_is_a_proposer_error(server):
    server.enqueue(*[http_error(429, "rate limited")] * 2)
    with pytest.raises(ProposerError, match="rate limited"):
        openai_proposer(server, max_retries=1).propose(small_state())


def test_openai_hanging_server_times_out(server):
    server.enqueue(hang(30))
    started = time.monotonic()
    with pytest.raises(ProposerError, match="Timeout") as info:
        openai_proposer(server, timeout=0.3).propose(small_state())
    assert time.monotonic() - started < 5
    assert info.value.usage is not None and info.value.usage.seconds >= 0.3


def test_openai_malformed_json_is_a_proposer_error(server):
    server.enqueue(malformed_json())
    with pytest.raises(ProposerError):
        openai_proposer(server).propose(small_state())


def test_openai_empty_reply_is_a_proposer_error_with_usage(server):
    server.enqueue(Reply("   ", tokens_in=10, tokens_out=0))
    with pytest.raises(ProposerError, match="empty") as info:
        openai_proposer(server).propose(small_state())
    assert info.value.usage is not None and info.value.usage.tokens_in == 10


def test_openai_estimates_tokens_when_the_server_reports_none(server):
    server.enqueue(Reply(REPLY, usage=False))
    usage = openai_proposer(server).propose(small_state()).usage
    assert usage.tokens_in == pytest.approx(len(render_prompt(small_state())) / 4, abs=1)
    assert usage.tokens_out == pytest.approx(len(REPLY) / 4, abs=1)
    assert usage.cost_usd == 0.0  # an unknown (local) model has no price


def test_openai_sends_temperature_when_set(server):
    server.enqueue(Reply(REPLY))
    openai_proposer(server, temperature=0.3, max_tokens=777, seed=10).propose(small_state())
    body = server.requests[0].body
    assert body["temperature"] == 0.3 and body["max_tokens"] == 777 and body["seed"] == 13


def test_openai_environment_fallbacks(server, monkeypatch):
    monkeypatch.setenv("EMBEDDING_TTC_OPENAI_BASE_URL", server.openai_base_url)
    monkeypatch.setenv("EMBEDDING_TTC_OPENAI_MODEL", "env-model")
    server.enqueue(Reply(REPLY))
    # No key: a local server needs none.
    proposer = SingleDraftProposer(OpenAIBackend(timeout=5.0, max_retries=0))
    assert proposer.propose(small_state()).source == PROGRAM
    request = server.requests[0]
    assert request.body["model"] == "env-model"
    assert request.headers["authorization"] == "Bearer not-needed"


def test_openai_configuration_errors():
    with pytest.raises(ProposerConfigError, match="model"):
        OpenAIBackend(base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ProposerConfigError, match="OPENAI_API_KEY"):
        OpenAIBackend(model="gpt-4o")


# --------------------------------------------------------------------------------------------
# Anthropic backend


def anthropic_proposer(server: CannedServer, **options) -> SingleDraftProposer:
    defaults = {"base_url": server.url, "api_key": "test-key", "timeout": 5.0, "max_retries": 0}
    return SingleDraftProposer(AnthropicBackend(**{**defaults, **options}))


def test_anthropic_valid_reply(server):
    state = small_state()
    server.enqueue(Reply(REPLY, tokens_in=2000, tokens_out=500, model="claude-opus-4-6"))
    proposal = anthropic_proposer(server).propose(state)
    assert proposal.source == PROGRAM and proposal.proposer == "draft:anthropic"
    usage = proposal.usage
    assert (usage.model, usage.tokens_in, usage.tokens_out) == ("claude-opus-4-6", 2000, 500)
    assert usage.cost_usd == pytest.approx((2000 * 5.0 + 500 * 25.0) / 1e6)
    (request,) = server.requests
    assert request.path == "/v1/messages"
    assert request.body["model"] == "claude-opus-4-6" and request.body["max_tokens"] > 0
    assert "temperature" not in request.body
    assert server.prompts == [render_prompt(state)]


def test_anthropic_temperature_and_placeholder_key(server):
    server.enqueue(Reply(REPLY))
    backend = AnthropicBackend(base_url=server.url, temperature=0.5, max_retries=0)
    SingleDraftProposer(backend).propose(small_state())
    assert server.requests[0].body["temperature"] == 0.5


def test_anthropic_failures_are_proposer_errors(server):
    server.enqueue(http_error(500), malformed_json())
    proposer = anthropic_proposer(server)
    with pytest.raises(ProposerError, match="500"):
        proposer.propose(small_state())
    with pytest.raises(ProposerError):
        proposer.propose(small_state())


# --------------------------------------------------------------------------------------------
# llama.cpp backend (the package is not installed here: an honest fake module stands in)


class FakeLlama:
    """Records what the proposer asks of ``llama_cpp.Llama``; answers with a canned reply."""

    instances: ClassVar[list[FakeLlama]] = []
    reply: ClassVar[str] = ""  # "" answers REPLY

    def __init__(self, model_path: str, **kwargs) -> None:
        self.model_path = model_path
        self.kwargs = kwargs
        self.calls: list[dict] = []
        FakeLlama.instances.append(self)

    def create_chat_completion(self, messages, **kwargs):
        """Streams like llama-cpp-python: a role delta, then the reply line by line, then prose
        after the code that a proposer should not wait for (``streamed`` counts what was read).
        """
        self.calls.append({"messages": messages, **kwargs})
        assert kwargs.get("stream") is True, "the proposer streams its completions"
        self.streamed = 0
        text = FakeLlama.reply or REPLY
        pieces = [*text.splitlines(keepends=True), "\nThis program works because ", "..."]
        if "response_format" in kwargs:  # a grammar-constrained decode ends with its JSON
            assert kwargs["response_format"]["type"] == "json_object"
            assert "schema" in kwargs["response_format"]
            pieces = text.splitlines(keepends=True)

        def chunks():
            yield {"choices": [{"delta": {"role": "assistant"}, "finish_reason": None}]}
            for piece in pieces:
                self.streamed += 1
                yield {"choices": [{"delta": {"content": piece}, "finish_reason": None}]}
            yield {"choices": [{"delta": {}, "finish_reason": "stop"}]}

        return chunks()

    def tokenize(self, text: bytes, add_bos: bool = True) -> list[int]:
        return list(range(len(text.split())))


@pytest.fixture()
def fake_llama_cpp(monkeypatch):
    FakeLlama.instances = []
    FakeLlama.reply = ""
    module = types.ModuleType("llama_cpp")
    module.Llama = FakeLlama
    monkeypatch.setitem(sys.modules, "llama_cpp", module)
    return module


def test_llama_cpp_missing_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes the import fail
    with pytest.raises(
        MissingExtraError, match=r"llama-cpp-python.*pip install -e '\.\[local-llm\]'"
    ):
        LlamaCppBackend(tmp_path / "model.gguf")


def test_llama_cpp_missing_model_file(fake_llama_cpp, tmp_path):
    with pytest.raises(ProposerConfigError, match="does not exist"):
        LlamaCppBackend(tmp_path / "absent.gguf")


def test_llama_cpp_with_a_fake_module(fake_llama_cpp, tmp_path):
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF")
    backend = LlamaCppBackend(path, n_ctx=4096, n_threads=2, max_tokens=512, seed=5)
    proposer = SingleDraftProposer(backend)
    state = small_state()
    first = proposer.propose(state)
    proposer.propose(state)
    (llm,) = FakeLlama.instances  # loaded once per backend
    assert llm.model_path == str(path)
    assert llm.kwargs == {"n_ctx": 4096, "n_threads": 2, "seed": 5, "verbose": False}
    call = llm.calls[0]
    assert call["messages"] == [{"role": "user", "content": render_prompt(state)}]
    assert call["max_tokens"] == 512 and call["seed"] == 5 + state.generation
    assert first.source == PROGRAM and first.proposer == "draft:llama-cpp"
    # The stream is cut once the program block is closed: the prose after it is not read.
    assert llm.streamed == len(REPLY.splitlines()) - 1
    reply_read = REPLY.removesuffix("Done.\n")
    assert first.raw_reply == reply_read
    # Tokens are counted with the model's tokenizer (the fake's: whitespace words).
    assert (first.usage.model, first.usage.tokens_in, first.usage.tokens_out) == (
        "tiny.gguf",
        len(render_prompt(state).split()),
        len(reply_read.split()),
    )
    assert first.usage.cost_usd == 0.0


def test_the_llama_cpp_backend_knows_no_program_the_caller_says_where_to_stop(
    fake_llama_cpp, tmp_path
):
    from embedding_ttc.search.conversation import program_block_done

    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF")
    backend = LlamaCppBackend(path)
    messages = [{"role": "user", "content": "write a program"}]
    whole = backend.chat(messages, seed=0)  # no rule: the reply runs to its end
    (llm,) = FakeLlama.instances
    assert llm.streamed == len(REPLY.splitlines()) + 2 and whole.text.endswith("...")
    cut = backend.chat(messages, seed=0, stop=program_block_done)
    assert llm.streamed == len(REPLY.splitlines()) - 1
    assert cut.text == REPLY.removesuffix("Done.\n") and program_block_done(cut.text)
    assert not program_block_done("```python\ndef program(Q, D, S, ctx):\n    return S\n")


# --------------------------------------------------------------------------------------------
# The registry and its contract


def build(name: str, server: CannedServer, tmp_path: Path) -> ChatBackend:
    if name == "openai":
        server.enqueue(Reply(REPLY))
        return make_backend(
            name, model="canned", base_url=server.openai_base_url, max_retries=0, seed=3
        )
    if name == "anthropic":
        server.enqueue(Reply(REPLY))
        return make_backend(name, base_url=server.url, max_retries=0, seed=3)
    if name == "llama-cpp":
        path = tmp_path / "tiny.gguf"
        path.write_bytes(b"GGUF")
        return make_backend(name, model_path=path, seed=3)
    raise AssertionError(f"add {name!r} to the contract test")


@pytest.mark.parametrize("name", BACKENDS.names())
def test_backend_contract(name, server, tmp_path, fake_llama_cpp):
    backend = build(name, server, tmp_path)
    assert isinstance(backend, ChatBackend)
    assert backend.name == name
    assert not hasattr(backend, "propose")  # a backend only answers; strategies propose
    reply = backend.chat([{"role": "user", "content": render_prompt(small_state())}], seed=4)
    assert "def program(" in reply.text
    usage = reply.usage
    assert usage.model and usage.seconds >= 0 and usage.cost_usd >= 0
    assert usage.tokens_in > 0 and usage.tokens_out > 0


def test_registry_names_and_suggestions():
    assert BACKENDS.names() == ["openai", "anthropic", "llama-cpp"]
    with pytest.raises(UnknownNameError, match="openai"):
        make_backend("opneai")


def test_price_table():
    assert price_usd("gpt-4o-mini", 1_000_000, 1_000_000) == pytest.approx(0.75)
    assert price_usd("claude-sonnet-4-5-20250929", 1_000_000, 0) == pytest.approx(3.0)
    assert price_usd("openai/gpt-4.1", 0, 1_000_000) == pytest.approx(8.0)
    assert price_usd("qwen2.5-coder:32b", 10**6, 10**6) == 0.0
    assert price_usd("claude-opus-4-7", 10**6, 10**6) == 0.0  # unlisted, not guessed


def test_resolve_parent():
    state = small_state()
    assert resolve_parent("g0001", state) == "g0001"
    assert resolve_parent("G0001", state) == "g0001"
    assert resolve_parent("g1", state) == "g0001"
    assert resolve_parent("P0", state) == "g0000-P0"
    assert resolve_parent("g0042", state) == "g0042"  # unknown: kept as written
    assert resolve_parent(None, state) is None
