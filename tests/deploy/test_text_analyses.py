"""A lexical program's index stores its documents' text analyses, one folder per segment;
serving from them scores as analysing live does, after an addition and after compaction."""

from __future__ import annotations

import numpy as np
import pytest

from embedding_ttc.deploy.corpus import Document
from embedding_ttc.deploy.index import Index
from embedding_ttc.deploy.reranker import Reranker
from embedding_ttc.programs.primitives.text_analysis import analyze
from embedding_ttc.tasks.catalog import load_task

from . import QUERIES, corpus
from fakes import HashingEncoder

ENCODER = HashingEncoder()
LEXICAL = ["LexicalHybridRRF", "CrossRoundRRF", "BM25"]


def build(path, program, n=8):
    return Index.build(path, corpus(n), encoder=ENCODER, program=program, reference_queries=QUERIES)


def without_analyses(index: Index) -> Reranker:
    """A reranker over the same index whose programs analyse their documents live."""
    bare = Index.load(index.directory)
    bare.analyses = None
    return Reranker(bare, ENCODER)


def tokens(analyses, i):
    row = analyses.take(np.array([i])).row(0)
    return [(analyses.vocabulary.token(int(t)), int(c)) for t, c in row.terms]


def test_a_lexical_index_holds_the_analyses_and_others_do_not(tmp_path):
    index = build(tmp_path / "lex", "LexicalHybridRRF")
    assert index.analyses is not None and index.analyses.n_docs == 8
    (segment,) = index.manifest.segments
    assert "analyses/meta.json" in segment.files  # checksummed like every file
    fresh = analyze([d.joined for d in corpus(8)])
    assert [tokens(index.analyses, i) for i in range(8)] == [tokens(fresh, i) for i in range(8)]
    assert Index.load(index.directory, verify=True).analyses is not None
    assert build(tmp_path / "p0", "P0").analyses is None


@pytest.mark.parametrize("program", LEXICAL)
def test_scores_are_the_same_with_and_without_the_stored_analyses(tmp_path, program):
    index = build(tmp_path / "ix", program, n=6)
    served, live = Reranker(index, ENCODER), without_analyses(index)
    lists = [["d3", "d0", "d5"], ["d1", "d2", "d3", "d4"], ["d0", "d1", "d2", "d3", "d4", "d5"]]
    a, b = served.score(QUERIES[:3], lists), live.score(QUERIES[:3], lists)
    for x, y in zip(a.scores, b.scores, strict=True):
        np.testing.assert_array_equal(x, y)
    # Documents the index does not hold, given as texts, are analysed live in both.
    given = [
        {
            "id": "d4",
            "title": "Bread",
            "text": "A recipe for bread. Knead the dough for ten minutes.",
        },
        "The knight moves in an L shape. The bishop moves diagonally.",
        "Volcanoes erupt when pressure builds. Lava flows downhill.",
    ]
    x, y = served.score_texts(QUERIES[3], given), live.score_texts(QUERIES[3], given)
    assert x.live == 2
    np.testing.assert_array_equal(x.scores, y.scores)


def test_add_appends_the_new_documents_analyses(tmp_path):
    build(tmp_path / "ix", "LexicalHybridRRF", n=5)
    added = Index.load(tmp_path / "ix").add(corpus(3, start=5), encoder=ENCODER)
    assert added.analyses is not None and added.analyses.n_docs == 8
    first, second = (s.analyses for s in added.segments)
    assert first is not None and second is not None
    # The new segment's vocabulary extends the first's: every token keeps its id.
    assert second.vocabulary.tokens[: len(first.vocabulary)] == first.vocabulary.tokens
    fresh = analyze([d.joined for d in corpus(8)])
    assert [tokens(added.analyses, i) for i in range(8)] == [tokens(fresh, i) for i in range(8)]
    rebuilt = build(tmp_path / "fresh", "LexicalHybridRRF")
    ids = [list(rebuilt.doc_ids)] * len(QUERIES)
    a = Reranker(added, ENCODER).score(QUERIES, ids)
    b = Reranker(rebuilt, ENCODER).score(QUERIES, ids)
    for x, y in zip(a.scores, b.scores, strict=True):
        np.testing.assert_array_equal(x, y)


def test_compaction_keeps_the_analyses_and_the_scores(tmp_path):
    build(tmp_path / "ix", "LexicalHybridRRF", n=5)
    added = Index.load(tmp_path / "ix").add(corpus(3, start=5), encoder=ENCODER)
    compacted = added.compact()
    assert len(compacted.segments) == 1 and compacted.analyses is not None
    fresh = analyze([d.joined for d in corpus(8)])
    got = [tokens(compacted.analyses, i) for i in range(8)]
    assert got == [tokens(fresh, i) for i in range(8)]
    ids = [list(compacted.doc_ids)] * len(QUERIES)
    a = Reranker(compacted, ENCODER).score(QUERIES, ids)
    b = without_analyses(compacted).score(QUERIES, ids)
    for x, y in zip(a.scores, b.scores, strict=True):
        np.testing.assert_array_equal(x, y)


def test_rows_of_several_segments_are_gathered_in_the_order_asked(tmp_path):
    build(tmp_path / "ix", "LexicalHybridRRF", n=5)
    added = Index.load(tmp_path / "ix").add(corpus(3, start=5), encoder=ENCODER)
    assert added.analyses is not None
    fresh = analyze([d.joined for d in corpus(8)])
    order = np.array([7, 0, 5, 2, 6])
    taken = added.analyses.take(order)
    for k, i in enumerate(order):
        row = taken.row(k)
        got = [(taken.vocabulary.token(int(t)), int(c)) for t, c in row.terms]
        assert got == tokens(fresh, int(i))


@pytest.mark.parametrize("task", ["cmrc2018_zh", "jaquad_ja", "arcd_ar", "xquad_th"])
def test_stored_analyses_of_unspaced_and_arabic_text_equal_the_live_ones(
    tmp_path, shared_datasets, task
):
    # Real documents and queries of scripts the unicode tokenizer treats apart (Han and Kana
    # bigrams, Thai bigrams and sentences, Arabic normalisation): what the index stores at
    # build time is what analysing the text at query time gives, tokens and scores alike.
    loaded = load_task(task, shared_datasets)
    rows = zip(loaded.doc_ids, loaded.doc_titles, loaded.doc_bodies, strict=True)
    docs = [Document(i, t, b) for i, t, b in list(rows)[:12]]
    index = Index.build(
        tmp_path / "ix", docs, encoder=ENCODER, program="LexicalHybridRRF",
        reference_queries=list(loaded.query_texts[:8]),
    )  # fmt: skip
    assert index.analyses is not None
    fresh = analyze([d.joined for d in docs])
    stored = [tokens(index.analyses, i) for i in range(len(docs))]
    assert stored == [tokens(fresh, i) for i in range(len(docs))]
    assert all(len(t) > 10 for t in stored)  # no document of the script analysed as empty
    queries = list(loaded.query_texts[8:11])
    lists = [[d.id for d in docs]] * len(queries)
    a = Reranker(index, ENCODER).score(queries, lists)
    b = without_analyses(index).score(queries, lists)
    for x, y in zip(a.scores, b.scores, strict=True):
        np.testing.assert_array_equal(x, y)
