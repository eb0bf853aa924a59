"""BidirZScore, SentMaxSim, AdaptGranularity and CoverageTriple on hand-built tasks.

Every program runs through ``run_programs`` with the honest ``HashingEncoder`` fake (a bag of
words: texts that share words land close together), and its scores are compared with the
formula worked out here with numpy, or with a ranking that the formula implies.
"""

from __future__ import annotations

import numpy as np
import pytest

from embedding_ttc.encoders.base import PASSAGE, QUERY
from embedding_ttc.evaluation.evaluate import run_programs
from embedding_ttc.programs.base import Program
from embedding_ttc.programs.catalog import get_program
from embedding_ttc.programs.library.bidir_zscore import bidirectional_scores
from embedding_ttc.programs.library.coverage_channels import Centred, CoverageChannels, unit_rows
from embedding_ttc.programs.primitives.channels import mask_for
from embedding_ttc.programs.primitives.chunking import (
    sentence_pairs,
    split_paragraphs,
    split_sentences,
)
from embedding_ttc.programs.primitives.feedback import NORM_EPS
from embedding_ttc.tasks.task import RetrievalTask

from fakes import HashingEncoder
from library_support import direct_call

BURIED = (
    "The river flooded the valley in spring. Farmers moved their cattle uphill. "
    "The mayor opened a shelter downtown. Volcanic ash darkens the glacier. "
    "Schools closed for a week. Engineers inspected every bridge. Prices of grain rose. "
    "Trains ran late on the coast line. A new museum opened in the capital. "
    "Fishermen repaired their nets in the harbour. Tourists crowded the market square."
)
DECOY = "Volcanic ash covers the glacier."  # 4 of the query's 5 words, in a short text


def buried_task() -> RetrievalTask:
    """One query whose exact sentence is buried in an 11-sentence document."""
    return RetrievalTask(
        name="buried",
        doc_ids=["buried", "decoy", "bread", "rates"],
        doc_titles=[""] * 4,
        doc_bodies=[
            BURIED,
            DECOY,
            "Bake bread with flour and water. Knead the dough.",
            "Interest rates rose again. Inflation stayed high.",
        ],
        query_ids=["q"],
        query_texts=["volcanic ash darkens the glacier"],
        qrels={"q": {"buried": 1}},
    )


def pool_task(tiny: RetrievalTask) -> RetrievalTask:
    """The tiny task as a reranking task: each query ranks only its pool."""
    pools = {"q1": ["d1", "d2", "d3"], "q2": ["d2", "d3", "d4", "d5"], "q3": ["d1", "d5"]}
    return RetrievalTask(**{**tiny.__dict__, "name": "tiny-pool", "pools": pools})


def scores(program: Program, task: RetrievalTask, encoder: HashingEncoder):
    """The program's full score matrix (NaN off-pool) and its result record."""
    run = next(run_programs([program], task, encoder))
    out = np.full((task.n_queries, task.n_docs), np.nan)
    for i, (cand, values) in enumerate(run.rows):
        out[i, slice(None) if cand is None else cand] = values
    return out, run.result


def masked_zscore(x: np.ndarray, mask: np.ndarray, axis: int) -> np.ndarray:
    """Population z-score along ``axis`` over the masked entries, 0 elsewhere (by hand)."""
    count = mask.sum(axis=axis, keepdims=True)
    mean = np.where(mask, x, 0.0).sum(axis=axis, keepdims=True) / count
    std = np.sqrt(np.where(mask, (x - mean) ** 2, 0.0).sum(axis=axis, keepdims=True) / count)
    return np.where(mask & (std > 1e-6), (x - mean) / np.where(std > 0, std, 1.0), 0.0)


def maxsim_by_hand(q: np.ndarray, doc_chunks: list[np.ndarray]) -> np.ndarray:
    return np.array([(chunks @ q).max() for chunks in doc_chunks])


# --- BidirZScore -----------------------------------------------------------------------------


def test_bidir_zscore_is_the_sum_of_column_zscores_by_hand(tiny_task):
    encoder = HashingEncoder(dim=32, two_views=True)
    out, _ = scores(get_program("BidirZScore"), tiny_task, encoder)

    Q = encoder.encode(tiny_task.query_texts, view=QUERY)
    D = encoder.encode(tiny_task.doc_texts, view=PASSAGE)
    D_q = encoder.encode(tiny_task.doc_texts, view=QUERY)  # each document "as if a query"
    S, S_rev = Q @ D.T, Q @ D_q.T
    z = (S - S.mean(axis=0)) / S.std(axis=0) + (S_rev - S_rev.mean(axis=0)) / S_rev.std(axis=0)
    np.testing.assert_allclose(out, z, atol=1e-5)
    assert not np.allclose(S, S_rev)  # the two views differ, so the channels do too


def test_bidir_zscore_column_statistics_are_over_every_query_of_the_batch(tiny_task):
    task = pool_task(tiny_task)
    encoder = HashingEncoder(dim=32, two_views=True)
    out, _ = scores(get_program("BidirZScore"), task, encoder)

    index = {d: j for j, d in enumerate(task.doc_ids)}
    mask = np.zeros((task.n_queries, task.n_docs), dtype=bool)
    for i, q in enumerate(task.query_ids):
        mask[i, [index[d] for d in task.pools[q]]] = True
    Q = encoder.encode(task.query_texts, view=QUERY)
    S = Q @ encoder.encode(task.doc_texts, view=PASSAGE).T
    S_rev = Q @ encoder.encode(task.doc_texts, view=QUERY).T
    z = (S - S.mean(axis=0)) / S.std(axis=0) + (S_rev - S_rev.mean(axis=0)) / S_rev.std(axis=0)
    np.testing.assert_allclose(out[mask], z[mask], atol=1e-5)
    direct = bidirectional_scores(S, S_rev, mask)  # the same, with 0 off the pools
    np.testing.assert_allclose(direct[mask], z[mask], atol=1e-5)
    assert (direct[~mask] == 0.0).all()
    # d4 is ranked by q2 alone; the other queries still measure its spread, so its z-score is
    # not 0 (over candidates only, one query has no spread and every such column would be 0).
    assert out[1, index["d4"]] != 0.0
    assert masked_zscore(S, mask, axis=0)[1, index["d4"]] == 0.0


def test_bidir_zscore_costs_one_query_view_encode_per_document(tiny_task):
    _, p0 = scores(get_program("P0"), tiny_task, HashingEncoder())
    _, result = scores(get_program("BidirZScore"), tiny_task, HashingEncoder())
    assert result.cost.texts["program/index/retrieval.query"] == tiny_task.n_docs
    assert result.cost.program_calls == tiny_task.n_docs
    assert result.cost.query_calls == p0.cost.query_calls == tiny_task.n_queries
    n_base = tiny_task.n_docs + tiny_task.n_queries
    assert result.cost.cost_ratio == pytest.approx((n_base + tiny_task.n_docs) / n_base)


# --- SentMaxSim ------------------------------------------------------------------------------


def test_sent_maxsim_finds_the_document_whose_one_matching_sentence_is_buried():
    task, encoder = buried_task(), HashingEncoder(dim=64)
    cosine, p0 = scores(get_program("P0"), task, encoder)
    out, result = scores(get_program("SentMaxSim"), task, encoder)

    # Whole-document cosine prefers the short decoy: the buried sentence is diluted.
    assert cosine[0, 1] > cosine[0, 0]
    assert p0.ndcg_at_10 < 1.0
    # The buried sentence is the query itself (cosine 1); the decoy's best is its only one.
    assert out[0, 0] == pytest.approx(1.0, abs=1e-5)
    assert out[0, 1] == pytest.approx(cosine[0, 1], abs=1e-5)
    assert result.ndcg_at_10 == pytest.approx(1.0)
    # Index-time cost: one passage-view encode per sentence, nothing per query.
    n_sentences = sum(len(split_sentences(text)) for text in task.doc_texts)
    assert result.cost.texts["program/index/retrieval.passage"] == n_sentences
    assert result.cost.query_calls == task.n_queries


# --- AdaptGranularity ------------------------------------------------------------------------


def test_adapt_granularity_is_the_max_of_the_row_zscored_maxsim_channels():
    task, encoder = buried_task(), HashingEncoder(dim=64)
    out, result = scores(get_program("AdaptGranularity"), task, encoder)

    q = encoder.encode(task.query_texts, view=QUERY)[0]
    channels = []
    for split in (split_paragraphs, split_sentences):
        chunks = [encoder.encode(split(text), view=PASSAGE) for text in task.doc_texts]
        channels.append(masked_zscore(maxsim_by_hand(q, chunks)[None], np.ones((1, 4), bool), 1))
    np.testing.assert_allclose(out, np.maximum(*channels), atol=1e-5)
    assert result.ndcg_at_10 == pytest.approx(1.0)  # the sentence channel carries the match
    n_chunks = sum(len(split_paragraphs(t)) + len(split_sentences(t)) for t in task.doc_texts)
    assert result.cost.texts["program/index/retrieval.passage"] == n_chunks


# --- CoverageTriple --------------------------------------------------------------------------


def test_coverage_triple_encodes_three_granularities_and_a_topic_view_at_index_time():
    task, encoder = buried_task(), HashingEncoder(dim=64)
    out, result = scores(get_program("CoverageTriple"), task, encoder)
    assert np.all(np.isfinite(out))
    # The eight z-scored channels sum to zero over a query's candidates.
    assert out.sum() == pytest.approx(0.0, abs=1e-4)
    expected = sum(
        len(split_sentences(t)) + len(sentence_pairs(split_sentences(t))) + len(split_paragraphs(t))
        for t in task.doc_texts
    )
    expected += task.n_docs  # the topic channel: documents at 128 tokens
    assert result.cost.texts == {
        "base/index/retrieval.passage": task.n_docs,
        "base/query/retrieval.query": task.n_queries,
        "program/index/retrieval.passage": expected,
    }


def test_centring_uses_only_documents_in_play_and_moves_both_sides():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [-5.0, -5.0]], dtype=np.float32)
    in_play = np.array([True, True, False])  # the third row is no query's candidate
    centred = Centred.of(X, in_play)
    np.testing.assert_allclose(centred.centroid, [0.5, 0.5])
    s = np.sqrt(0.5)
    np.testing.assert_allclose(centred.embeddings[:2], [[s, -s], [-s, s]], atol=1e-6)
    # A query at the centroid itself becomes the zero vector (it favours no document).
    q = np.array([[0.5, 0.5], [1.0, 0.0]], dtype=np.float32)
    np.testing.assert_allclose(centred.queries(q), [[0.0, 0.0], [s, -s]], atol=1e-6)


def centred_as_first_written(X: np.ndarray, in_play: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``Centred.of`` as first written: a float64 copy, the mean, ``x - mu``, the norm, divide."""
    x = np.asarray(X, dtype=np.float64)
    mu = x[in_play].mean(axis=0) if in_play.any() else np.zeros(x.shape[1])
    x = x - mu
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    out = np.divide(x, norms, out=np.zeros_like(x), where=norms > NORM_EPS)
    return out.astype(np.float32), mu


@pytest.mark.parametrize("n", [0, 1, 2, 255, 256, 257, 1024, 1025, 2049, 3000])
def test_centring_is_bit_for_bit_the_unblocked_float64_computation(n):
    # The evaluation path's scores depend on these bits: blocking the rows, converting them a
    # block at a time and taking the mean in a float64 accumulator must change none of them.
    rng = np.random.default_rng(n)
    X = (rng.standard_normal((n, 384)) * rng.uniform(0.01, 10, size=(n, 1))).astype(np.float32)
    if n > 3:
        X[3] = X[:3].mean(axis=0)  # a row at the centroid of a subset below
    for in_play in (np.ones(n, bool), rng.random(n) < 0.4, np.zeros(n, bool), np.arange(n) < 3):
        want, mu = centred_as_first_written(X, in_play)
        got = Centred.of(X, in_play)
        assert got.embeddings.dtype == np.float32
        np.testing.assert_array_equal(got.centroid, mu)
        np.testing.assert_array_equal(got.embeddings, want)
        Q = rng.standard_normal((5, 384)).astype(np.float32)
        Q[0] = mu  # a query at the centroid: the zero vector
        np.testing.assert_array_equal(got.queries(Q), centred_as_first_written_queries(Q, mu))
    np.testing.assert_array_equal(unit_rows(X), centred_as_first_written(X, np.zeros(n, bool))[0])


@pytest.mark.parametrize("n", [0, 2, 511, 512, 513, 3000])
def test_live_cosines_are_the_batch_cosines_to_float32_rounding(n):
    # A deployed request scores one query without the float64 centring of every row; its
    # cosines about the centroid must be the batch path's, to float32 rounding. The rows
    # share a strong common direction (as a real encoder's do), where centring matters most.
    rng = np.random.default_rng(n)
    common = rng.standard_normal(384)
    X = (rng.standard_normal((n, 384)) * 0.4 + common).astype(np.float32)
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
    in_play = np.arange(n) % 3 != 1
    centred = Centred.of(X, in_play)
    alive = Centred.of(X, in_play, live=True)
    assert alive.embeddings is None and centred.rows is None  # each form holds one copy
    np.testing.assert_allclose(alive.centroid, centred.centroid, rtol=1e-7, atol=1e-9)
    Q = (rng.standard_normal((3, 384)) * 0.4 + common).astype(np.float32)
    batch = centred.queries(Q) @ centred.embeddings.T
    np.testing.assert_array_equal(centred.cosines(Q), batch)
    live = alive.cosines(Q)
    assert live.dtype == np.float32 and live.shape == (3, n)
    np.testing.assert_allclose(live, batch, atol=2e-6)
    # Exactly the cosine about the centroid, computed in float64 throughout.
    x, q = X.astype(np.float64) - centred.centroid, Q.astype(np.float64) - centred.centroid
    xn = np.linalg.norm(x, axis=1)[:, None]  # a lone row in play is its own centroid: 0
    exact = (q / np.linalg.norm(q, axis=1)[:, None]) @ np.divide(x, xn, where=xn > 0, out=0 * x).T
    np.testing.assert_allclose(live, exact, atol=1e-6)


def test_live_cosines_score_a_row_at_the_centroid_zero():
    # A row whose float32 difference from the centroid is zero has no direction: it scores 0
    # (the batch path's row there is float64 rounding noise, a direction of no meaning).
    X = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]], dtype=np.float32)
    centred = Centred.of(X, np.array([True, True, False]), live=True)
    live = centred.cosines(np.array([[1.0, 0.0]], dtype=np.float32))
    np.testing.assert_allclose(live, [[1.0, -1.0, 0.0]], atol=1e-6)
    assert live[0, 2] == 0.0


def test_live_channels_are_the_batch_channels(tiny_task):
    encoder = HashingEncoder(dim=32)
    Q, D, _, ctx, _ = direct_call(tiny_task, encoder, None)
    batch = CoverageChannels.build(D, ctx, None).scores(Q, None)
    channels = CoverageChannels.build(D, ctx, None, live=True)
    live = channels.scores(Q[:1], None)
    assert len(live) == len(batch) == 8
    for got, want in zip(live, batch, strict=True):
        np.testing.assert_allclose(got, want[:1], atol=2e-6)
    with pytest.raises(ValueError, match="no mask"):
        channels.scores(Q, np.ones((Q.shape[0], D.shape[0]), dtype=bool))
    with pytest.raises(ValueError, match="either"):
        Centred(np.zeros(2))


def centred_as_first_written_queries(Q: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """``Centred.queries`` as first written."""
    x = np.asarray(Q, dtype=np.float64) - mu
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    out = np.divide(x, norms, out=np.zeros_like(x), where=norms > NORM_EPS)
    return out.astype(np.float32)


def cosine_about_centroid(Q: np.ndarray, X: np.ndarray, in_play: list[int]) -> np.ndarray:
    """Cosine of ``Q - mu`` and ``X - mu``, ``mu`` the mean of the rows of X in play."""
    mu = X[in_play].mean(axis=0)
    Qc, Xc = Q - mu, X - mu
    Qc /= np.linalg.norm(Qc, axis=1, keepdims=True)
    Xc /= np.linalg.norm(Xc, axis=1, keepdims=True)
    return Qc @ Xc.T


@pytest.mark.parametrize("in_play", [[0, 1, 2, 3, 4], [0, 4]])
def test_coverage_triple_document_channels_are_cosines_about_the_in_play_centroid(
    tiny_task, in_play
):
    # With every query ranking d1 and d5 only, d2..d4 are out of play: they leave the centroid.
    encoder = HashingEncoder(dim=32)
    candidates = None if len(in_play) == 5 else (np.array(in_play),) * 3
    Q, D, S, ctx, _ = direct_call(tiny_task, encoder, candidates)
    mask = mask_for(ctx, S)
    channels = CoverageChannels.build(D, ctx, mask).scores(Q, mask)
    assert len(channels) == 8

    topic = encoder.encode(tiny_task.doc_texts, view=PASSAGE, max_length=128)
    for channel, X in ((channels[6], topic), (channels[7], D)):
        expected = cosine_about_centroid(Q, X, in_play)
        np.testing.assert_allclose(channel[:, in_play], expected[:, in_play], atol=1e-5)
