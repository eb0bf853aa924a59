"""Every adapter ranks a framework's shortlist exactly as Reranker.rerank_texts does."""

from __future__ import annotations

import numpy as np
import pytest

from deploy import QUERIES, corpus
from embedding_ttc.deploy.errors import CandidateRequestError
from embedding_ttc.evaluation.evaluate import run_programs
from embedding_ttc.programs.catalog import get_program
from embedding_ttc.tasks.task import RetrievalTask

from . import HARNESSES, Item

ADAPTERS = sorted(HARNESSES)
TOL = 1e-6


def items(ids: list[str]) -> list[Item]:
    docs = {d.id: d for d in corpus(8)}
    return [Item(i, docs[i].title, docs[i].text) for i in ids]


def mixed() -> list[Item]:
    """Held records, documents the index lacks (d6, d7, a new one), a held text without id."""
    held_without_id = corpus(8)[2]
    return [
        *items(["d4", "d6", "d0", "d7", "d1"]),
        Item(None, "", "Owls hunt at night. They fly silently."),
        Item(None, held_without_id.title, held_without_id.text),
    ]


@pytest.mark.parametrize("adapter", ADAPTERS)
@pytest.mark.parametrize("program", ["P0", "BM25", "SentMaxSim", "BidirZScore"])
def test_the_ranking_is_rerank_texts(rerankers, adapter, program):
    reranker = rerankers(program)
    given = mixed()
    records = [
        {"text": it.text, "title": it.title, **({"id": it.id} if it.id else {})} for it in given
    ]
    for top_n in (3, len(given)):
        want = reranker.rerank_texts(QUERIES[0], records, k=top_n)
        got = HARNESSES[adapter](reranker, QUERIES[0], given, top_n)
        assert got == [(r.position, r.score) for r in want.results]


def tiny_task() -> RetrievalTask:
    docs = corpus(6)
    return RetrievalTask(
        name="tiny-deploy",
        doc_ids=[d.id for d in docs],
        doc_titles=[d.title for d in docs],
        doc_bodies=[d.text for d in docs],
        query_ids=[f"q{i}" for i in range(len(QUERIES))],
        query_texts=list(QUERIES),
        qrels={f"q{i}": {f"d{i}": 1} for i in range(len(QUERIES))},
    )


@pytest.mark.parametrize("adapter", ADAPTERS)
@pytest.mark.parametrize("program", ["P0", "SoftCentroid", "SentMaxSim"])
def test_held_documents_score_as_the_evaluation_does(rerankers, adapter, program):
    """A shortlist of indexed documents gets the evaluate path's scores (programs whose scores
    depend on the query and its candidates only: the evaluation's query batches do not matter).
    """
    reranker = rerankers(program)
    task = tiny_task()
    run = next(run_programs([get_program(program)], task, reranker.encoder, shortlist=4))
    for q, (cand, values) in enumerate(run.rows):
        ids = [task.doc_ids[j] for j in cand]
        got = dict(HARNESSES[adapter](reranker, task.query_texts[q], items(ids), len(ids)))
        scores = np.array([got[p] for p in range(len(ids))])
        np.testing.assert_allclose(scores, values, rtol=0, atol=TOL)
        by_id = reranker.score([task.query_texts[q]], [ids])  # and exactly the ids path
        expected = dict(
            zip((task.doc_ids[j] for j in by_id.candidates[0]), by_id.scores[0], strict=True)
        )
        assert scores.tolist() == [float(expected[i]) for i in ids]


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_top_n_is_honoured(rerankers, adapter):
    reranker = rerankers("P0")
    given = items(["d0", "d1", "d2", "d3", "d4"])
    assert len(HARNESSES[adapter](reranker, QUERIES[0], given, 2)) == 2
    assert len(HARNESSES[adapter](reranker, QUERIES[0], given, 9)) == 5
    best = HARNESSES[adapter](reranker, QUERIES[0], given, 1)
    assert best == HARNESSES[adapter](reranker, QUERIES[0], given, 5)[:1]


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_an_empty_shortlist_ranks_to_nothing_without_encoding(rerankers, adapter):
    reranker = rerankers("P0")
    before = list(reranker.encoder.calls)
    assert HARNESSES[adapter](reranker, QUERIES[0], [], 3) == []
    assert reranker.encoder.calls == before


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_document_without_id_is_matched_by_its_text(rerankers, adapter):
    """Held documents, by id or by text, are not encoded: the call encodes the query only."""
    reranker = rerankers("SentMaxSim")  # index-time work: the documents' sentences
    given = items(["d0", "d3"])
    anonymous = [Item(None, it.title, it.text) for it in given]
    before = len(reranker.encoder.calls)
    by_text = HARNESSES[adapter](reranker, QUERIES[1], anonymous, 2)
    assert reranker.encoder.calls[before:] == [1]  # the query
    assert by_text == HARNESSES[adapter](reranker, QUERIES[1], given, 2)
    new = [*given, Item(None, "", "Owls hunt at night. They fly silently.")]
    before = len(reranker.encoder.calls)
    HARNESSES[adapter](reranker, QUERIES[1], new, 3)
    assert sum(reranker.encoder.calls[before:]) > 1  # the new document was encoded live


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_changed_text_under_a_held_id_is_scored_as_given(rerankers, adapter):
    reranker = rerankers("P0")
    changed = Item("d0", "", "Bishops and knights move across the board.")
    got = dict(HARNESSES[adapter](reranker, QUERIES[3], [changed, *items(["d1"])], 2))
    want = reranker.score_texts(QUERIES[3], [changed.text, "d1"]).scores[0]
    assert got[0] == float(want)


@pytest.mark.parametrize("adapter", ADAPTERS)
@pytest.mark.parametrize(
    ("given", "message"),
    [
        ([Item("d0", "", "a"), Item("d0", "", "b")], "'d0' is given twice"),
        ([Item("d0", "", "a"), Item(None, "", "   ")], "document 1 has an empty text"),
    ],
)
def test_bad_shortlists_are_named(rerankers, adapter, given, message):
    with pytest.raises(CandidateRequestError) as err:
        HARNESSES[adapter](rerankers("P0"), QUERIES[0], given, 2)
    assert message in str(err.value)
