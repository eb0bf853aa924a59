"""Indexes built by an earlier embedding-ttc still load and answer as they did when built.

The indexes in ``fixtures/prechange`` were built with all-MiniLM-L6-v2 by the code of their time
(see the README there); ``expected.json`` holds what they answered then. The query embeddings
are replayed from ``queries.npy``, so the test needs no model and checks only the index format
and the deployed path: loading, checksums, the stored index-time work, the reference sample,
the BM25 first stage, and the programs' scores.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from embedding_ttc.deploy import Reranker, recipe_for
from embedding_ttc.deploy.errors import ProgramVersionError
from embedding_ttc.deploy.index import Index
from embedding_ttc.encoders.base import QUERY, Embeddings, EncoderInfo

DATA = Path(__file__).parent / "fixtures" / "prechange"
EXPECTED = json.loads((DATA / "expected.json").read_text(encoding="utf-8"))
PROGRAMS = ("P0", "BidirZScore")
# Programs that raised their version since the fixture was built (script-aware tokens and
# sentences, issue 22): their old indexes refuse to serve rather than mix versions.
RAISED = ("SentMaxSim", "LexicalHybridRRF")


class ReplayEncoder:
    """A fake encoder that answers only the recorded queries, with their recorded embeddings.

    It claims the identity of the index's encoder; any other text, view or budget is an error,
    so a deployed program that reached the live encoder for document-side work would fail.
    """

    def __init__(self, index: Index, texts: Sequence[str], embeddings: Embeddings) -> None:
        built = index.manifest.encoder
        self.info = EncoderInfo(
            name=built.name,
            family="replay",
            model_id=built.model_id,
            revision=built.revision,
            dim=built.dim,
        )
        self.rows = {text: row for text, row in zip(texts, embeddings, strict=True)}

    def encode(
        self,
        texts: Sequence[str],
        *,
        view: str,
        dim: int | None = None,
        max_length: int | None = None,
    ) -> Embeddings:
        assert (view, dim, max_length) == (QUERY, None, None), (view, dim, max_length)
        missing = [t for t in texts if t not in self.rows]
        assert not missing, f"not a recorded query: {missing}"
        return np.stack([self.rows[t] for t in texts]).astype(np.float32)


def rankings(found: list[list[tuple[str, float]]]) -> list[list[list[object]]]:
    return [[[doc_id, score] for doc_id, score in ranking] for ranking in found]


def assert_same(found: list[list[tuple[str, float]]], expected: list[list[list[object]]]) -> None:
    got = rankings(found)
    assert [[d for d, _ in r] for r in got] == [[d for d, _ in r] for r in expected]
    for g, e in zip(got, expected, strict=True):
        assert [s for _, s in g] == pytest.approx([s for _, s in e], rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("program", RAISED)
def test_an_index_of_a_program_whose_version_rose_refuses_to_serve(program):
    index = Index.load(DATA / program, verify=True)  # the files still load and verify
    with pytest.raises(ProgramVersionError, match="rebuild the index"):
        index.load_program()


@pytest.mark.parametrize("program", PROGRAMS)
def test_an_index_built_before_still_loads_and_reranks_the_same(program):
    index = Index.load(DATA / program, verify=True)  # every file's size and SHA-256
    assert index.program == program
    # The recipe written at build time is the one the program declares today.
    assert index.manifest.program.split == recipe_for(program).describe()
    queries = EXPECTED["queries"]
    encoder = ReplayEncoder(index, queries, np.load(DATA / "queries.npy"))
    reranker = Reranker(index, encoder)
    k, shortlist = EXPECTED["k"], EXPECTED["shortlist"]
    every = list(index.doc_ids)
    want = EXPECTED[program]
    assert_same(reranker.rerank_batch(queries, [every] * len(queries), k), want["rerank"])
    assert_same(reranker.search_batch(queries, k, "dense", shortlist), want["dense"])
    assert_same(reranker.search_batch(queries, k, "bm25", shortlist), want["bm25"])
    # Nothing document-side reached the live encoder: the stored work served it all.
    scored = reranker.score(queries, [every] * len(queries))
    assert scored.stats.index_misses == 0
    assert scored.stats.program_encodes == 0
