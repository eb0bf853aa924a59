"""Feedback primitives: centroids, Rocchio, VPRF, SoftCentroid, Fisher, rank stability."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from embedding_ttc.programs.primitives.feedback import (
    FISHER_SHRINKAGE,
    SOFT_CENTROID_ALPHA,
    SOFT_CENTROID_K,
    SOFT_CENTROID_TAU,
    centroid,
    fisher_direction,
    fisher_lda_direction,
    query_residual,
    rank_stability,
    rocchio,
    soft_centroid_query,
    softmax_centroid,
    vprf_update,
)
from embedding_ttc.programs.primitives.scores import ranks

# --- centroid -----------------------------------------------------------------------------


def test_centroid_by_hand() -> None:
    x = np.array([[1.0, 0.0], [0.0, 1.0], [3.0, 4.0]])
    # mean of rows 0, 1 = [0.5, 0.5] -> [1, 1] / sqrt(2).
    c = centroid(x, np.array([0, 1]))
    assert c.dtype == np.float32
    np.testing.assert_allclose(c, [0.70711, 0.70711], atol=1e-5)
    np.testing.assert_allclose(centroid(x, np.array([True, True, False])), c)
    np.testing.assert_allclose(centroid(x, np.array([2])), [0.6, 0.8], atol=1e-6)


def test_centroid_degenerate_sets_give_zero_vector() -> None:
    x = np.array([[1.0, 0.0], [-1.0, 0.0]])
    np.testing.assert_array_equal(centroid(x, np.array([], dtype=np.intp)), [0.0, 0.0])
    np.testing.assert_array_equal(centroid(x, np.array([0, 1])), [0.0, 0.0])  # they cancel
    with pytest.raises(ValueError):
        centroid(x, np.array([2]))


# --- rocchio ------------------------------------------------------------------------------


def test_rocchio_by_hand() -> None:
    q, pos, neg = np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([0.6, 0.8])
    # q + pos - neg = [0.4, 0.2] -> / sqrt(0.2) = [0.89443, 0.44721].
    out = rocchio(q, pos, neg)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [0.89443, 0.44721], atol=1e-5)
    # 2q + pos (gamma = 0) = [2, 1] -> the same direction.
    np.testing.assert_allclose(rocchio(q, pos, neg, alpha=2.0, gamma=0.0), out, atol=1e-6)
    np.testing.assert_allclose(rocchio(q, pos), [0.70711, 0.70711], atol=1e-5)


def test_rocchio_vectorised_over_queries_with_shared_centroid() -> None:
    qs = np.array([[1.0, 0.0], [0.0, 1.0]])
    pos = np.array([0.0, 1.0])
    # Row 0: [1, 1] / sqrt(2); row 1: [0, 2] -> [0, 1].
    np.testing.assert_allclose(rocchio(qs, pos), [[0.70711, 0.70711], [0.0, 1.0]], atol=1e-5)
    per_query = np.array([[0.0, 1.0], [1.0, 0.0]])
    np.testing.assert_allclose(
        rocchio(qs, per_query), [[0.70711, 0.70711], [0.70711, 0.70711]], atol=1e-5
    )
    with pytest.raises(ValueError):
        rocchio(qs, np.zeros((3, 2)))


def test_rocchio_vanishing_sum_is_zero_not_nan() -> None:
    np.testing.assert_array_equal(rocchio(np.array([1.0, 0.0]), np.array([-1.0, 0.0])), [0, 0])


# --- VPRF ---------------------------------------------------------------------------------

D3 = np.array([[0.0, 1.0], [0.6, 0.8], [1.0, 0.0]])


def test_vprf_update_by_hand() -> None:
    q = np.array([[1.0, 0.0]])
    # mean(D[0], D[1]) = [0.3, 0.9]; 0.5 [1, 0] + 0.5 [0.3, 0.9] = [0.65, 0.45];
    # norm sqrt(0.625) = 0.790569 -> [0.822192, 0.569210].
    out = vprf_update(q, D3, [np.array([0, 1])], beta=0.5)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[0.822192, 0.569210]], atol=1e-5)
    # beta = 1: the normalised mean [0.3, 0.9] / sqrt(0.9); beta = 0: the query.
    np.testing.assert_allclose(
        vprf_update(q, D3, [np.array([0, 1])], beta=1.0), [[0.316228, 0.948683]], atol=1e-5
    )
    np.testing.assert_allclose(vprf_update(q, D3, [np.array([0, 1])], beta=0.0), q)


def test_vprf_update_empty_feedback_keeps_query_direction() -> None:
    q = np.array([[2.0, 0.0], [0.0, 1.0]])
    out = vprf_update(q, D3, [np.array([], dtype=np.intp), np.array([2])], beta=0.5)
    # Row 0: (0.5 [2, 0]) normalised = [1, 0]. Row 1: [0.5, 0.5] normalised.
    np.testing.assert_allclose(out, [[1.0, 0.0], [0.70711, 0.70711]], atol=1e-5)
    with pytest.raises(ValueError):
        vprf_update(q, D3, [np.array([0])], beta=0.5)
    with pytest.raises(ValueError):
        vprf_update(q, D3, [np.array([0]), np.array([0])], beta=1.5)


# --- SoftCentroid -------------------------------------------------------------------------

DS = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
QS = np.array([[1.0, 0.0], [0.0, 1.0]])
# Row 0 ranks every doc; row 1 excludes doc 0 (whose score 5 would otherwise win).
SS = np.array([[math.log(3), 0.0, -5.0], [5.0, math.log(3), 0.0]])
MS = np.array([[True, True, True], [False, True, True]])


def test_softmax_centroid_by_hand() -> None:
    # tau = 1, k = 2. Row 0: top {0, 1}, weights e^ln3 : e^0 = 3/4 : 1/4 ->
    #   0.75 [1, 0] + 0.25 [0, 1] = [0.75, 0.25] -> / sqrt(0.625) = [0.948683, 0.316228].
    # Row 1 (doc 0 masked out): top {1, 2}, weights 3/4, 1/4 ->
    #   0.75 [0, 1] + 0.25 [0.6, 0.8] = [0.15, 0.95] -> / sqrt(0.925) = [0.155963, 0.987763].
    c = softmax_centroid(QS, DS, SS, 2, 1.0, MS)
    assert c.dtype == np.float32
    np.testing.assert_allclose(c, [[0.948683, 0.316228], [0.155963, 0.987763]], atol=1e-5)


def test_soft_centroid_query_by_hand() -> None:
    # Row 0: 0.5 [1, 0] + 0.5 [0.948683, 0.316228] = [0.974342, 0.158114]
    #   -> / 0.987088 = [0.987087, 0.160182].
    # Row 1: 0.5 [0, 1] + 0.5 [0.155963, 0.987763] = [0.077981, 0.993882]
    #   -> / 0.996936 = [0.078221, 0.996936].
    out = soft_centroid_query(QS, DS, SS, k=2, tau=1.0, alpha=0.5, mask=MS)
    np.testing.assert_allclose(out, [[0.987087, 0.160182], [0.078221, 0.996936]], atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-6)


def test_soft_centroid_defaults_are_the_papers() -> None:
    assert (SOFT_CENTROID_K, SOFT_CENTROID_TAU, SOFT_CENTROID_ALPHA) == (3, 0.05, 0.5)
    rng = np.random.default_rng(0)
    q = rng.normal(size=(4, 6))
    d = rng.normal(size=(9, 6))
    s = q @ d.T
    np.testing.assert_array_equal(
        soft_centroid_query(q, d, s), soft_centroid_query(q, d, s, k=3, tau=0.05, alpha=0.5)
    )


def test_softmax_centroid_temperature_limits() -> None:
    # tau -> 0 puts all weight on the top document; tau -> inf gives the plain top-k mean.
    c_cold = softmax_centroid(QS, DS, SS, 2, 1e-4, MS)
    np.testing.assert_allclose(c_cold, [[1.0, 0.0], [0.0, 1.0]], atol=1e-6)
    c_hot = softmax_centroid(QS, DS, SS, 2, 1e6, MS)
    # Row 0: mean([1, 0], [0, 1]) -> [0.70711, 0.70711].
    np.testing.assert_allclose(c_hot[0], [0.70711, 0.70711], atol=1e-5)


def test_softmax_centroid_without_candidates_keeps_the_query() -> None:
    mask = np.array([[False, False, False], [True, True, True]])
    c = softmax_centroid(QS, DS, SS, 2, 1.0, mask)
    np.testing.assert_array_equal(c[0], [0.0, 0.0])
    np.testing.assert_allclose(soft_centroid_query(QS, DS, SS, mask=mask)[0], QS[0])


def test_softmax_centroid_rejects_bad_parameters() -> None:
    with pytest.raises(ValueError):
        softmax_centroid(QS, DS, SS, 0, 1.0)
    with pytest.raises(ValueError):
        softmax_centroid(QS, DS, SS, 2, 0.0)
    with pytest.raises(ValueError):
        softmax_centroid(QS, DS, SS[:, :2], 2, 1.0)
    with pytest.raises(ValueError):
        soft_centroid_query(QS, DS, SS, alpha=-0.1)


# --- query residual -----------------------------------------------------------------------


def test_query_residual_by_hand() -> None:
    # [0.6, 0.8] minus its projection on the x axis = [0, 0.8]; the direction's scale is moot.
    q = np.array([0.6, 0.8])
    np.testing.assert_allclose(query_residual(q, np.array([2.0, 0.0])), [0.0, 0.8], atol=1e-7)
    np.testing.assert_allclose(query_residual(q, np.zeros(2)), q, atol=1e-7)
    qs = np.array([[0.6, 0.8], [1.0, 0.0]])
    np.testing.assert_allclose(
        query_residual(qs, np.array([0.0, 1.0])), [[0.6, 0.0], [1.0, 0.0]], atol=1e-7
    )


# --- Fisher -------------------------------------------------------------------------------

DF = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0], [-0.6, 0.8]])


def test_fisher_direction_by_hand() -> None:
    # mean top = [0.9, 0.3], mean bottom = [-0.3, 0.9], difference [1.2, -0.6]
    # -> / sqrt(1.8) = [0.894427, -0.447214].
    w = fisher_direction(DF, np.array([0, 1]), np.array([2, 3]))
    assert w.dtype == np.float32
    np.testing.assert_allclose(w, [0.894427, -0.447214], atol=1e-5)
    np.testing.assert_array_equal(fisher_direction(DF, np.array([0]), np.array([], int)), [0, 0])


def test_fisher_lda_direction_by_hand() -> None:
    # top {(2, 2), (2, 0)}: mean (2, 1), centred (0, ±1); bottom {(0, 1), (0, -1)}: mean (0, 0).
    # Pooled S_w = diag(0, 4) / (4 - 2) = diag(0, 2); trace / d = 1, so lam = shrinkage.
    # shrinkage 1: (diag(1, 3))^-1 (2, 1) = (2, 1/3) -> / sqrt(37 / 9) = (0.986394, 0.164399).
    # shrinkage 0.5: (diag(0.5, 2.5))^-1 (2, 1) = (4, 0.4) -> (0.995037, 0.099504).
    x = np.array([[2.0, 2.0], [2.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    top, bottom = np.array([0, 1]), np.array([2, 3])
    assert FISHER_SHRINKAGE == 1.0
    np.testing.assert_allclose(
        fisher_lda_direction(x, top, bottom), [0.986394, 0.164399], atol=1e-5
    )
    np.testing.assert_allclose(
        fisher_lda_direction(x, top, bottom, shrinkage=0.5), [0.995037, 0.099504], atol=1e-5
    )
    # The paper's simplification, (2, 1) / sqrt(5), is the large-shrinkage limit.
    np.testing.assert_allclose(fisher_direction(x, top, bottom), [0.894427, 0.447214], atol=1e-5)
    np.testing.assert_allclose(
        fisher_lda_direction(x, top, bottom, shrinkage=1e9), [0.894427, 0.447214], atol=1e-5
    )


def test_fisher_lda_one_document_per_class_and_bad_shrinkage() -> None:
    # S_w = 0: no spread to whiten, so the direction is the mean difference.
    np.testing.assert_allclose(
        fisher_lda_direction(DF, np.array([0]), np.array([2])), [0.70711, -0.70711], atol=1e-5
    )
    np.testing.assert_array_equal(
        fisher_lda_direction(DF, np.array([], int), np.array([2])), [0, 0]
    )
    with pytest.raises(ValueError):
        fisher_lda_direction(DF, np.array([0]), np.array([2]), shrinkage=0.0)


def test_fisher_lda_high_dimension_with_few_documents_is_finite() -> None:
    rng = np.random.default_rng(3)
    d = rng.normal(size=(12, 64))  # singular S_w without the ridge
    w = fisher_lda_direction(d, np.arange(3), np.arange(9, 12))
    assert np.isfinite(w).all()
    assert np.linalg.norm(w) == pytest.approx(1.0, abs=1e-6)


# --- rank stability -----------------------------------------------------------------------


def test_rank_stability_by_hand() -> None:
    # doc 0: ranks (1, 3) -> var 1 -> 1/2; doc 1: (2, 2) -> var 0 -> 1; doc 2: (3, 1) -> 1/2.
    r1 = np.array([[1.0, 2.0, 3.0]])
    r2 = np.array([[3.0, 2.0, 1.0]])
    out = rank_stability([r1, r2])
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[0.5, 1.0, 0.5]])
    # Three channels: doc 0 at (1, 1, 4): mean 2, var (1 + 1 + 4) / 3 = 2 -> 1/3.
    r3 = np.array([[4.0, 2.0, 3.0]])
    np.testing.assert_allclose(rank_stability([r1, r1, r3])[0, 0], 1 / 3, rtol=1e-6)
    # One channel: every candidate is perfectly stable.
    np.testing.assert_array_equal(rank_stability([r1]), [[1.0, 1.0, 1.0]])


def test_rank_stability_non_candidates_are_zero() -> None:
    s1 = np.array([[0.9, 0.5, 0.1, 0.3], [0.2, 0.4, 0.6, 0.8]])
    s2 = np.array([[0.1, 0.5, 0.9, 0.3], [0.2, 0.4, 0.6, 0.8]])
    mask = np.array([[True, True, True, False], [True, True, True, True]])
    out = rank_stability([ranks(s1, mask), ranks(s2, mask)])
    # Row 0 ranks over {0.9, 0.5, 0.1} and {0.1, 0.5, 0.9}: (1, 3), (2, 2), (3, 1).
    np.testing.assert_allclose(out, [[0.5, 1.0, 0.5, 0.0], [1.0, 1.0, 1.0, 1.0]])
    # A rank that is infinite in only one channel also counts as non-candidate.
    partial = np.array([[1.0, np.inf]])
    np.testing.assert_array_equal(rank_stability([partial, np.array([[1.0, 2.0]])]), [[1.0, 0.0]])
    with pytest.raises(ValueError):
        rank_stability([])


# --- purity ---------------------------------------------------------------------------------


def test_inputs_are_not_mutated_and_results_are_deterministic() -> None:
    q, d, s, m = QS.copy(), DS.copy(), SS.copy(), MS.copy()
    r1, r2 = ranks(s, m), ranks(-s, m)
    r1_copy, r2_copy = r1.copy(), r2.copy()
    calls: list[Callable[[], Any]] = [
        lambda: centroid(d, np.array([0, 2])),
        lambda: rocchio(q, d[:2], d[1:]),
        lambda: vprf_update(q, d, [np.array([0]), np.array([1, 2])], 0.3),
        lambda: softmax_centroid(q, d, s, 2, 0.05, m),
        lambda: soft_centroid_query(q, d, s, mask=m),
        lambda: query_residual(q, d[:2]),
        lambda: fisher_direction(d, np.array([0]), np.array([1, 2])),
        lambda: fisher_lda_direction(d, np.array([0, 1]), np.array([2])),
        lambda: rank_stability([r1, r2]),
    ]
    for call in calls:
        np.testing.assert_array_equal(call(), call())
    for got, want in [(q, QS), (d, DS), (s, SS), (m, MS), (r1, r1_copy), (r2, r2_copy)]:
        np.testing.assert_array_equal(got, want)
