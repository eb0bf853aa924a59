"""BM25, BM25DenseRRF, LexicalHybridRRF and CrossRoundRRF on hand-built tasks.

The programs run through ``run_programs`` (or are called directly, to inspect CrossRoundRRF's
rounds) with the honest ``HashingEncoder`` fake; expected scores are built from the lexical
primitives and ``rrf``, whose own values are pinned in ``test_lexical.py`` and
``test_scores.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from embedding_ttc.evaluation.evaluate import run_programs
from embedding_ttc.programs.base import Program
from embedding_ttc.programs.catalog import get_program
from embedding_ttc.programs.library.cross_round_rrf import CrossRoundRRF, side_means
from embedding_ttc.programs.library.hybrid_evidence import HybridBackbone
from embedding_ttc.programs.primitives.channels import mask_for
from embedding_ttc.programs.primitives.lexical import (
    BM25,
    bigram_overlap,
    query_term_coverage,
    rare_term_idf,
)
from embedding_ttc.programs.primitives.scores import RRF_K, rrf
from embedding_ttc.tasks.task import RetrievalTask

from fakes import HashingEncoder
from library_support import direct_call


def scores(program: Program, task: RetrievalTask, encoder: HashingEncoder):
    """The program's score matrix on a full-corpus task, and its result record."""
    run = next(run_programs([program], task, encoder))
    return np.stack([values for _, values in run.rows]), run.result


# --- BM25 ------------------------------------------------------------------------------------


def test_bm25_ranks_the_exact_term_match_first_without_encoding(tiny_task):
    out, result = scores(get_program("BM25"), tiny_task, HashingEncoder())
    # "inflation and rates": d4 holds all three words; "baking bread": only d5 says bread.
    assert int(np.argmax(out[1])) == tiny_task.doc_ids.index("d4")
    assert int(np.argmax(out[2])) == tiny_task.doc_ids.index("d5")
    np.testing.assert_allclose(out, BM25.fit(tiny_task.doc_texts).scores(tiny_task.query_texts))
    assert result.cost.program_calls == 0
    assert result.cost.cost_ratio == 1.0


# --- BM25DenseRRF ----------------------------------------------------------------------------


def test_bm25_dense_rrf_is_the_rrf_of_bm25_and_the_cosine(tiny_task):
    encoder = HashingEncoder()
    out, result = scores(get_program("BM25DenseRRF"), tiny_task, encoder)
    _, _, S, _, _ = direct_call(tiny_task, encoder)
    bm25 = BM25.fit(tiny_task.doc_texts).scores(tiny_task.query_texts)
    np.testing.assert_allclose(out, rrf([bm25, S]), atol=1e-7)
    # By hand for q3 ("baking bread") and d5: BM25 rank 1 (only d5 says bread), cosine rank r.
    r = 1 + int(np.sum(S[2] > S[2, 4]))
    assert out[2, 4] == pytest.approx(1 / (RRF_K + 1) + 1 / (RRF_K + r))
    assert result.cost.program_calls == 0


# --- LexicalHybridRRF ------------------------------------------------------------------------


def test_lexical_hybrid_rrf_fuses_nine_embedding_and_two_lexical_channels(tiny_task):
    encoder = HashingEncoder()
    out, _ = scores(get_program("LexicalHybridRRF"), tiny_task, encoder)
    Q, D, _, ctx, _ = direct_call(tiny_task, encoder)
    embedding = HybridBackbone.build(D, ctx, None).scores(Q, None)
    lexical = [
        BM25.fit(tiny_task.doc_texts).scores(tiny_task.query_texts),
        bigram_overlap(tiny_task.query_texts, tiny_task.doc_texts),
    ]
    assert len(embedding) == 9
    np.testing.assert_allclose(out, rrf([*embedding, *lexical]), atol=1e-7)
    # Each of the eleven channels gives at most 1 / (k + 1), which only a unanimous first earns.
    assert out.max() <= 11 / (RRF_K + 1) + 1e-6


def test_lexical_hybrid_rrf_costs_coverage_triple_plus_one_query_view_encode_per_doc(tiny_task):
    encoder = HashingEncoder(two_views=True)
    _, coverage = scores(get_program("CoverageTriple"), tiny_task, encoder)
    _, hybrid = scores(get_program("LexicalHybridRRF"), tiny_task, encoder)
    assert hybrid.cost.texts == {
        **coverage.cost.texts,
        "program/index/retrieval.query": tiny_task.n_docs,
    }
    assert hybrid.cost.query_calls == tiny_task.n_queries  # lexical channels encode nothing


# --- CrossRoundRRF ---------------------------------------------------------------------------


def echo_task() -> RetrievalTask:
    """q1's two best documents are the query itself: its residual vanishes (fallback)."""
    return RetrievalTask(
        name="echo",
        doc_ids=["e1", "e2", "rates", "bread", "markets"],
        doc_titles=[""] * 5,
        doc_bodies=[
            "cats purr loudly",
            "cats purr loudly",
            "interest rates rose",
            "bread needs flour and water",
            "markets fell on inflation news",
        ],
        query_ids=["q1", "q2"],
        query_texts=["cats purr loudly", "inflation and interest rates"],
        qrels={"q1": {"e1": 1}, "q2": {"rates": 1}},
    )


def test_cross_round_rrf_is_the_rrf_of_its_three_rounds():
    task, encoder = echo_task(), HashingEncoder()
    Q, D, S, ctx, _ = direct_call(task, encoder)
    program = CrossRoundRRF()
    r1, r2, r3 = program.rounds(Q, D, S, ctx)
    np.testing.assert_array_equal(program(Q, D, S, ctx), rrf([r1, r2, r3]))
    # Round 1 fuses the nine embedding channels with the four lexical ones.
    lexical = [
        BM25.fit(task.doc_texts).scores(task.query_texts),
        bigram_overlap(task.query_texts, task.doc_texts),
        query_term_coverage(task.query_texts, task.doc_texts),
        rare_term_idf(task.query_texts, task.doc_texts),
    ]
    embedding = HybridBackbone.build(D, ctx, None).scores(Q, None)
    np.testing.assert_allclose(r1, rrf([*embedding, *lexical]), atol=1e-7)
    # Round 2 scores the Rocchio query: its ranking differs from round 1 somewhere.
    assert not np.array_equal(r2, r1)


def test_cross_round_rrf_round_three_falls_back_to_round_one_when_the_residual_is_small():
    task, encoder = echo_task(), HashingEncoder()
    Q, D, S, ctx, _ = direct_call(task, encoder)
    r1, _, r3 = CrossRoundRRF().rounds(Q, D, S, ctx)
    # q1: the documents above its median are e1 and e2, both equal to q1, so
    # q1 - proj(q1, mean) = 0 and round 3 is round 1.
    assert np.allclose(D[0], Q[0], atol=1e-6) and np.allclose(D[1], Q[0], atol=1e-6)
    np.testing.assert_array_equal(r3[0], r1[0])
    # q2's positive centroid is not along q2: round 3 scores the residual instead.
    assert not np.array_equal(r3[1], r1[1])


def test_cross_round_rrf_costs_what_lexical_hybrid_rrf_costs():
    task, encoder = echo_task(), HashingEncoder(two_views=True)
    _, hybrid = scores(get_program("LexicalHybridRRF"), task, encoder)
    _, cross = scores(get_program("CrossRoundRRF"), task, encoder)
    assert cross.cost.texts == hybrid.cost.texts  # Rocchio and the residual encode nothing


def test_side_means_are_plain_means_and_zero_for_an_empty_side():
    D = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=np.float32)
    side = np.array([[True, True, False], [False, False, False]])
    np.testing.assert_allclose(side_means(D, side), [[0.5, 0.5], [0.0, 0.0]])


def test_cross_round_rrf_ranks_only_candidates(tiny_task):
    encoder = HashingEncoder()
    candidates = (np.array([0, 1, 2]), np.array([2, 3]), np.array([3, 4]))
    Q, D, S, ctx, _ = direct_call(tiny_task, encoder, candidates)
    out = CrossRoundRRF()(Q, D, S, ctx)
    mask = mask_for(ctx, S)
    assert np.all(out[~mask] == 0.0)
    # No query has more than three candidates, so each round ranks every candidate at most
    # third, and each of the three fused terms is at least 1 / (k + 3).
    assert np.all(out[mask] >= 3 / (RRF_K + 3) - 1e-7)
