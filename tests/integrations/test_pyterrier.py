"""The PyTerrier re-ranker, in a PyTerrier pipeline over a hand-made first stage (no Java)."""

from __future__ import annotations

import pandas as pd
import pyterrier as pt
import pytest

from deploy import QUERIES, corpus
from embedding_ttc.deploy.errors import CandidateRequestError
from embedding_ttc.errors import MissingExtraError
from embedding_ttc.integrations.pyterrier import EmbeddingTTCReranker

from . import import_without

DOCS = {d.id: d for d in corpus(8)}


def first_stage() -> pd.DataFrame:
    """A BM25-like result frame for two queries, as a first-stage retriever returns it."""
    rows = []
    for qid, query, ids in (
        ("q7", QUERIES[3], ["d1", "d6", "d0"]),
        ("q2", QUERIES[1], ["d2", "d3", "d7", "d5"]),
    ):
        for rank, docno in enumerate(ids):
            doc = DOCS[docno]
            rows.append(
                {
                    "qid": qid,
                    "query": query,
                    "docno": docno,
                    "title": doc.title,
                    "text": doc.text,
                    "score": 10.0 - rank,
                    "rank": rank,
                }
            )
    return pd.DataFrame(rows)


def queries() -> pd.DataFrame:
    return pd.DataFrame({"qid": ["q7", "q2"], "query": [QUERIES[3], QUERIES[1]]})


def test_a_pipeline_reranks_each_query_best_first(rerankers):
    reranker = rerankers("BM25")
    bm25 = first_stage()
    kept = bm25.copy()
    out = (pt.Transformer.from_df(bm25) >> EmbeddingTTCReranker(reranker))(queries())
    assert out["qid"].tolist() == ["q7"] * 3 + ["q2"] * 4  # queries in the order they came
    assert list(out.columns) == list(bm25.columns)
    for qid, group in out.groupby("qid", sort=False):
        given = bm25[bm25["qid"] == qid]
        records = [
            {"id": d, "title": t, "text": x}
            for d, t, x in zip(given["docno"], given["title"], given["text"], strict=True)
        ]
        want = reranker.rerank_texts(given["query"].iloc[0], records, k=len(records))
        assert group["docno"].tolist() == [r.id for r in want.results]
        assert group["score"].tolist() == [r.score for r in want.results]
        assert group["rank"].tolist() == list(range(len(group)))
    pd.testing.assert_frame_equal(bm25, kept)  # the input frame is not changed
    assert not pt.java.started()  # a pure-Python transformer: no JVM


def test_a_rank_cutoff_composes(rerankers):
    reranker = EmbeddingTTCReranker(rerankers("P0"))
    pipeline = pt.Transformer.from_df(first_stage()) >> reranker % 2
    out = pipeline(queries())
    full = (pt.Transformer.from_df(first_stage()) >> reranker)(queries())
    assert out["docno"].tolist() == full[full["rank"] < 2]["docno"].tolist()


def test_the_title_column_is_optional(rerankers):
    reranker = rerankers("P0")
    bm25 = first_stage()
    bm25["text"] = [DOCS[d].joined for d in bm25["docno"]]  # the title already in the text
    untitled = EmbeddingTTCReranker(reranker, title_field=None)(bm25)
    without_column = EmbeddingTTCReranker(reranker)(bm25.drop(columns=["title"]))
    titled = EmbeddingTTCReranker(reranker)(first_stage())
    pd.testing.assert_frame_equal(
        untitled.drop(columns=["title", "text"]), titled.drop(columns=["title", "text"])
    )
    pd.testing.assert_frame_equal(
        without_column.drop(columns=["text"]), titled.drop(columns=["title", "text"])
    )


def test_the_contract_can_be_inspected(rerankers):
    reranker = EmbeddingTTCReranker(rerankers("P0"))
    assert pt.inspect.transformer_inputs(reranker) == [["qid", "docno", "query", "text"]]
    columns = ["qid", "query", "docno", "text"]
    assert pt.inspect.transformer_outputs(reranker, columns) == [*columns, "score", "rank"]
    empty = reranker(pd.DataFrame(columns=columns))
    assert list(empty.columns) == [*columns, "score", "rank"] and empty.empty


def test_missing_columns_are_named(rerankers):
    reranker = EmbeddingTTCReranker(rerankers("P0"))
    with pytest.raises(pt.validate.InputValidationError, match="'text'"):
        reranker(first_stage().drop(columns=["text"]))


def test_bad_frames_are_named(rerankers):
    reranker = EmbeddingTTCReranker(rerankers("P0"))
    two_texts = first_stage()
    two_texts.loc[1, "query"] = "another query"
    with pytest.raises(ValueError, match="query id 'q7' comes with 2 query texts"):
        reranker(two_texts)
    twice = first_stage()
    twice.loc[4, "docno"] = "d2"
    with pytest.raises(
        CandidateRequestError, match="query id 'q2': document id 'd2' is given twice"
    ):
        reranker(twice)
    numbered = first_stage().astype({"docno": object})
    numbered.loc[0, "docno"] = 5
    with pytest.raises(
        CandidateRequestError, match="query id 'q7': document 0: 'id' must be a string"
    ):
        reranker(numbered)


def test_without_pyterrier_the_import_says_how_to_install_it(monkeypatch):
    with pytest.raises(MissingExtraError, match=r"'pyterrier'.*pip install -e '\.\[pyterrier\]'"):
        import_without(monkeypatch, "pyterrier", "embedding_ttc.integrations.pyterrier")
