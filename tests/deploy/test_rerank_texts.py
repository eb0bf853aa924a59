"""Reranking documents given by their texts: held ones from the index, the others computed live."""

from __future__ import annotations

import numpy as np
import pytest

from embedding_ttc.deploy.errors import CandidateRequestError
from embedding_ttc.deploy.index import Index
from embedding_ttc.deploy.reranker import Reranker
from embedding_ttc.encoders.cache import CachedEncoder
from embedding_ttc.programs.catalog import PROGRAMS

from . import QUERIES, corpus
from fakes import HashingEncoder

ENCODER = HashingEncoder()
HELD = ["P0", "SoftCentroid", "BM25", "BidirZScore", "SentMaxSim", "DiverseDualCtx"]


@pytest.fixture(scope="module")
def indexes(tmp_path_factory):
    """Per program: the index of all 8 documents, and the one built without the last two."""
    root = tmp_path_factory.mktemp("texts")
    built: dict[tuple[str, int], Reranker] = {}

    def get(program: str, n: int = 8) -> Reranker:
        if (program, n) not in built:
            index = Index.build(
                root / f"{program}-{n}",
                corpus(n),
                encoder=ENCODER,
                program=program,
                reference_queries=QUERIES,  # the same reference sample in both indexes
            )
            built[program, n] = Reranker(index, ENCODER)
        return built[program, n]

    return get


def records(reranker: Reranker, ids: list[str]) -> list[dict[str, str]]:
    docs = {d.id: d for d in corpus(8)}
    return [{"id": i, "title": docs[i].title, "text": docs[i].text} for i in ids]


@pytest.mark.parametrize("program", HELD)
def test_held_documents_score_exactly_as_the_ids_path(indexes, program):
    reranker = indexes(program)
    ids = ["d5", "d1", "d3", "d0", "d6"]
    by_id = reranker.score([QUERIES[0]], [ids])
    expected = dict(
        zip((reranker.index.doc_ids[j] for j in by_id.candidates[0]), by_id.scores[0], strict=True)
    )
    joined = {d.id: d.joined for d in corpus(8)}
    # Records with their ids, and bare texts (matched by text), in the caller's order.
    given: list = records(reranker, ids[:3]) + [joined[i] for i in ids[3:]]
    scored = reranker.score_texts(QUERIES[0], given)
    assert scored.held.all() and scored.live == 0
    assert scored.stats.live_documents == 0 and scored.stats.index_misses == 0
    assert scored.stats.program_encodes == by_id.stats.program_encodes  # query-time work only
    np.testing.assert_array_equal(scored.scores, np.array([expected[i] for i in ids]))


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_live_documents_score_as_if_built_into_the_index(indexes, program):
    """The index without d6 and d7, given them as texts, scores as the index built with them.

    The same candidates in both calls: programs with statistics over the candidates (BM25's
    IDF, centroids, the reference batch) then take them over the same documents, so their
    scores agree too. In corpus order the columns are the same, so the scores are the same
    bits; in another order, to float rounding.
    """
    full, partial = indexes(program, 8), indexes(program, 6)
    ids = [f"d{i}" for i in range(8)]
    for order in (ids, ["d7", "d2", "d6", "d0", "d5", "d1", "d4", "d3"]):
        want = full.score_texts(QUERIES[1], records(full, order))
        got = partial.score_texts(QUERIES[1], records(partial, order))
        assert want.live == 0 and got.live == 2
        assert got.held.tolist() == [d not in ("d6", "d7") for d in order]
        assert got.stats.live_documents == 2 and got.stats.index_misses == 0
        if order is ids:
            np.testing.assert_array_equal(got.scores, want.scores)
        else:
            np.testing.assert_allclose(got.scores, want.scores, rtol=0, atol=1e-5)


def test_a_changed_text_under_a_known_id_is_scored_as_given(indexes):
    reranker = indexes("P0")
    text = "Bishops and knights move across the board."
    scored = reranker.score_texts(QUERIES[0], [{"id": "d0", "text": text}, text, "d0"])
    assert scored.held.tolist() == [False, False, False]
    assert scored.scores[0] == scored.scores[1]  # the given text, not d0's stored one
    stored = reranker.score([QUERIES[0]], [["d0"]]).scores[0][0]
    assert abs(scored.scores[0] - stored) > 1e-3
    assert scored.stats.live_documents == 2  # once per distinct text


def test_rerank_texts_ranks_best_first_ties_by_position(indexes):
    reranker = indexes("P0")
    joined = [d.joined for d in corpus(8)]
    docs = [joined[6], "A brand new note about sleeping cats.", joined[0], joined[0]]
    ranking = reranker.rerank_texts(QUERIES[0], docs, k=3)
    scored = reranker.score_texts(QUERIES[0], docs)
    assert ranking.live == 1
    order = sorted(range(4), key=lambda p: (-scored.scores[p], p))[:3]
    assert [r.position for r in ranking.results] == order
    assert [r.score for r in ranking.results] == [float(scored.scores[p]) for p in order]
    tied = [r.position for r in ranking.results if r.position in (2, 3)]
    assert tied == sorted(tied)
    assert reranker.rerank("sleeping cats", ["d0", "d6"], k=1)[0][0] == "d0"  # ids unchanged


def test_a_repeated_live_document_is_not_re_encoded(tmp_path):
    inner = HashingEncoder()
    encoder = CachedEncoder(inner, tmp_path / "cache")
    index = Index.build(
        tmp_path / "ix", corpus(6), encoder=encoder, program="SentMaxSim", reference_queries=QUERIES
    )
    reranker = Reranker(index, encoder)
    new = ["Owls hunt at night. They fly silently.", "Glaciers carve valleys slowly."]
    first = reranker.score_texts(QUERIES[0], [*new, "d1"])
    encoded = sum(inner.calls)
    second = reranker.score_texts(QUERIES[0], [*new, "d1"])
    assert first.live == second.live == 3
    assert sum(inner.calls) == encoded  # documents, sentences and query: from the cache
    np.testing.assert_array_equal(first.scores, second.scores)


@pytest.mark.parametrize(
    ("documents", "message", "position"),
    [
        ([], "the document list is empty", None),
        (["a", {"id": "x", "text": "b"}, {"id": "x", "text": "c"}], "'x' is given twice", 2),
        (["a", {"text": "b", "url": "u"}], "unknown field(s) ['url']", 1),
        ([{"id": "x"}], "'text' must be a string, got missing", 0),
        ([{"id": "x", "title": "T", "text": " "}], "0 has an empty text (its 'text' field)", 0),
        ([{"id": "x", "contents": "Pyserini's field"}], "unknown field(s) ['contents']", 0),
        (["a", {"text": "b", "id": 3}], "'id' must be a string, got int", 1),
        (["a", "  "], "document 1 has an empty text", 1),
        (["a", 5], "must be a string or a record with 'text', got int", 1),
    ],
)
def test_bad_documents_are_named(indexes, documents, message, position):
    with pytest.raises(CandidateRequestError, match=None) as err:
        indexes("P0").score_texts("q", documents)
    assert message in str(err.value)
    assert err.value.position == position


def test_a_single_text_is_not_a_document_list(indexes):
    with pytest.raises(TypeError, match="not a single one"):
        indexes("P0").rerank_texts("q", "a document")  # type: ignore[arg-type]
