"""Score primitives: z-scores, ranks, RRF, top/bottom-k, median split, under the candidate mask."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from embedding_ttc.programs.primitives.scores import (
    RRF_K,
    ZSCORE_EPS,
    bottom_k_indices,
    candidate_mask,
    median_split,
    ranks,
    row_bottom_k,
    row_candidates,
    row_top_k,
    rrf,
    top_k_indices,
    zscore_cols,
    zscore_rows,
)

# Two queries, four documents. Row 0 has a tie (cols 2 and 3), row 1 too (cols 1 and 2).
S = np.array([[3.0, 1.0, 2.0, 2.0], [0.0, 5.0, 5.0, 1.0]], dtype=np.float32)
# Query 0 ranks docs {0, 1, 2}; query 1 ranks docs {0, 1, 3}.
M = np.array([[True, True, True, False], [True, True, False, True]])


def as_lists(xs: list[np.ndarray]) -> list[list[int]]:
    return [x.tolist() for x in xs]


# --- candidate_mask -----------------------------------------------------------------------


def test_candidate_mask_from_context_candidates() -> None:
    mask = candidate_mask(2, 4, [np.array([0, 1, 2]), np.array([3, 0, 1])])
    assert mask is not None
    assert mask.dtype == np.bool_
    np.testing.assert_array_equal(mask, M)


def test_candidate_mask_none_means_all_and_empty_pool_row() -> None:
    assert candidate_mask(2, 4, None) is None
    mask = candidate_mask(2, 3, [np.array([], dtype=np.intp), np.array([2])])
    assert mask is not None
    np.testing.assert_array_equal(mask, [[False, False, False], [False, False, True]])


@pytest.mark.parametrize(
    "cands",
    [
        [np.array([0])],  # one array for two queries
        [np.array([0]), np.array([4])],  # index out of range
        [np.array([0]), np.array([-1])],  # negative index
        [np.array([0]), np.array([0.5])],  # not integers
    ],
)
def test_candidate_mask_rejects_bad_candidates(cands: list[np.ndarray]) -> None:
    with pytest.raises(ValueError):
        candidate_mask(2, 4, cands)


# --- z-scores -----------------------------------------------------------------------------


def test_zscore_rows_by_hand() -> None:
    # Row 0: 3,1,2,2 -> mean 2, deviations 1,-1,0,0, var 2/4, std 0.70711 -> ±1.41421.
    # Row 1: 0,5,5,1 -> mean 2.75, deviations -2.75, 2.25, 2.25, -1.75,
    #        var (7.5625 + 5.0625 + 5.0625 + 3.0625) / 4 = 5.1875, std 2.27761.
    z = zscore_rows(S)
    assert z.dtype == np.float32
    np.testing.assert_allclose(
        z,
        [
            [1.41421, -1.41421, 0.0, 0.0],
            [-1.20740, 0.98787, 0.98787, -0.76835],
        ],
        atol=1e-5,
    )


def test_zscore_rows_masked_by_hand() -> None:
    # Row 0 over {3, 1, 2}: mean 2, var 2/3, std 0.81650 -> 1.22474, -1.22474, 0; col 3 -> 0.
    # Row 1 over cols {0, 1, 3} = {0, 5, 1}: mean 2, var (4 + 9 + 1) / 3, std 2.16025
    #        -> -0.92582, 1.38873, (col 2 -> 0), -0.46291.
    z = zscore_rows(S, M)
    np.testing.assert_allclose(
        z,
        [[1.22474, -1.22474, 0.0, 0.0], [-0.92582, 1.38873, 0.0, -0.46291]],
        atol=1e-5,
    )


def test_zscore_rows_ignores_non_candidate_values() -> None:
    wild = S.copy()
    wild[0, 3] = np.nan
    wild[1, 2] = 1e30
    np.testing.assert_array_equal(zscore_rows(wild, M), zscore_rows(S, M))
    np.testing.assert_array_equal(zscore_cols(wild, M), zscore_cols(S, M))


def test_zscore_cols_by_hand() -> None:
    # Each column has two values; population std is half their gap, so they map to ±1.
    # col 0: 3, 0 -> 1, -1; col 1: 1, 5 -> -1, 1; col 2: 2, 5 -> -1, 1; col 3: 2, 1 -> 1, -1.
    np.testing.assert_allclose(zscore_cols(S), [[1, -1, -1, 1], [-1, 1, 1, -1]], atol=1e-6)
    # Masked: cols 2 and 3 have a single candidate row each -> constant -> 0.
    np.testing.assert_allclose(zscore_cols(S, M), [[1, -1, 0, 0], [-1, 1, 0, 0]], atol=1e-6)


def test_zscore_constant_rows_give_zeros_never_nan() -> None:
    const32 = np.full((2, 5), 0.3, dtype=np.float32)
    np.testing.assert_array_equal(zscore_rows(const32), 0.0)
    np.testing.assert_array_equal(zscore_cols(const32), 0.0)
    # float64 0.1 summed seven times is not exactly 0.7: the std is ~1e-17, below ZSCORE_EPS.
    const64 = np.full((1, 7), 0.1)
    np.testing.assert_array_equal(zscore_rows(const64), 0.0)
    # A spread just above the epsilon is standardised.
    tiny = np.array([[0.0, 4 * ZSCORE_EPS]])
    np.testing.assert_allclose(zscore_rows(tiny), [[-1.0, 1.0]])


def test_zscore_single_and_no_candidate_rows() -> None:
    mask = np.array([[False, True, False, False], [False, False, False, False]])
    z = zscore_rows(S, mask)
    np.testing.assert_array_equal(z, np.zeros_like(S))
    assert np.isfinite(z).all()


# --- ranks --------------------------------------------------------------------------------


def test_ranks_by_hand_with_ties_by_column() -> None:
    # Row 0: 3 -> 1; the tied 2s at cols 2 and 3 -> 2 then 3; 1 -> 4.
    # Row 1: the tied 5s at cols 1 and 2 -> 1 then 2; 1 -> 3; 0 -> 4.
    r = ranks(S)
    assert r.dtype == np.float32
    np.testing.assert_array_equal(r, [[1, 4, 2, 3], [4, 1, 2, 3]])


def test_ranks_masked_by_hand() -> None:
    # Row 0 over {3, 1, 2}: 1, 3, 2, inf. Row 1 over cols {0, 1, 3} = {0, 5, 1}: 3, 1, inf, 2.
    inf = np.inf
    np.testing.assert_array_equal(ranks(S, M), [[1, 3, 2, inf], [3, 1, inf, 2]])


def test_ranks_non_finite_candidates_stay_ahead_of_non_candidates() -> None:
    # A -inf candidate is last among candidates but still ranked (2), not pushed behind the
    # non-candidate at col 1; a NaN candidate ranks last.
    x = np.array([[-np.inf, 7.0, 5.0], [np.nan, 1.0, 2.0]])
    mask = np.array([[True, False, True], [True, True, True]])
    np.testing.assert_array_equal(ranks(x, mask), [[2, np.inf, 1], [3, 2, 1]])


def test_ranks_are_a_permutation_of_candidates() -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(0, 4, size=(6, 30)).astype(np.float32)  # many ties
    mask = rng.random((6, 30)) < 0.6
    r = ranks(x, mask)
    for i in range(6):
        got = np.sort(r[i, mask[i]])
        np.testing.assert_array_equal(got, np.arange(1, mask[i].sum() + 1))
        assert np.isinf(r[i, ~mask[i]]).all()


# --- rrf ----------------------------------------------------------------------------------


def test_rrf_with_k_zero_is_the_papers_reciprocal_rank() -> None:
    # Single channel, masked ranks [[1, 3, 2, inf], [3, 1, inf, 2]] -> 1/rank, 0 off-candidate.
    np.testing.assert_allclose(
        rrf([S], mask=M, k=0), [[1, 1 / 3, 1 / 2, 0], [1 / 3, 1, 0, 1 / 2]], rtol=1e-6
    )


def test_rrf_two_channels_classic_k() -> None:
    assert RRF_K == 60
    other = np.array([[1.0, 2.0, 3.0, 4.0], [4.0, 3.0, 2.0, 1.0]])
    # ranks(S) = [[1, 4, 2, 3], [4, 1, 2, 3]]; ranks(other) = [[4, 3, 2, 1], [1, 2, 3, 4]].
    expected = [
        [1 / 61 + 1 / 64, 1 / 64 + 1 / 63, 1 / 62 + 1 / 62, 1 / 63 + 1 / 61],
        [1 / 64 + 1 / 61, 1 / 61 + 1 / 62, 1 / 62 + 1 / 63, 1 / 63 + 1 / 64],
    ]
    fused = rrf([S, other], ties="first")
    assert fused.dtype == np.float32
    np.testing.assert_allclose(fused, expected, rtol=1e-6)
    # the default shares tied ranks: S's row 0 ties (2.5, 2.5), row 1 ties (1.5, 1.5)
    averaged = rrf([S, other])
    np.testing.assert_allclose(averaged[0, 2:], [1 / 62.5 + 1 / 62, 1 / 62.5 + 1 / 61], rtol=1e-6)
    np.testing.assert_allclose(averaged[1, 1:3], [1 / 61.5 + 1 / 62, 1 / 61.5 + 1 / 63], rtol=1e-6)


def test_rrf_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        rrf([])
    with pytest.raises(ValueError):
        rrf([S, S[:, :3]])
    with pytest.raises(ValueError):
        rrf([S], k=-1)


# --- top / bottom k -----------------------------------------------------------------------


def test_top_k_by_hand() -> None:
    assert as_lists(top_k_indices(S, 2)) == [[0, 2], [1, 2]]
    assert as_lists(top_k_indices(S, 3)) == [[0, 2, 3], [1, 2, 3]]
    assert as_lists(top_k_indices(S, 2, M)) == [[0, 2], [1, 3]]
    # k beyond the pool returns every candidate, best first.
    assert as_lists(top_k_indices(S, 10, M)) == [[0, 2, 1], [1, 3, 0]]
    assert as_lists(top_k_indices(S, 0)) == [[], []]
    assert all(x.dtype == np.intp for x in top_k_indices(S, 2, M))


def test_bottom_k_by_hand() -> None:
    # Worst first; ties are the ranking read backwards, so col 3 precedes col 2 in row 0.
    assert as_lists(bottom_k_indices(S, 2)) == [[1, 3], [0, 3]]
    assert as_lists(bottom_k_indices(S, 3)) == [[1, 3, 2], [0, 3, 2]]
    assert as_lists(bottom_k_indices(S, 5, M)) == [[1, 2, 0], [0, 3, 1]]


def test_top_k_ties_at_the_cut_go_to_the_lower_column() -> None:
    row = np.array([1.0, 1.0, 1.0, 1.0, 0.0])
    assert row_top_k(row, 2).tolist() == [0, 1]
    assert row_bottom_k(row, 2).tolist() == [4, 3]


def test_row_top_k_with_unsorted_duplicate_candidates() -> None:
    row = np.array([0.5, 0.9, 0.9, 0.1, 0.7])
    assert row_top_k(row, 3, np.array([4, 2, 1, 2, 3])).tolist() == [1, 2, 4]
    assert row_bottom_k(row, 2, np.array([4, 2, 1, 2, 3])).tolist() == [3, 4]
    assert row_candidates(np.array([3, 1, 3]), 5).tolist() == [1, 3]
    with pytest.raises(ValueError):
        row_top_k(row, 1, np.array([5]))
    with pytest.raises(ValueError):
        row_top_k(row, -1)


def test_top_and_bottom_k_agree_with_a_full_stable_sort() -> None:
    rng = np.random.default_rng(1)
    x = rng.integers(0, 5, size=(8, 40)).astype(np.float64)
    mask = rng.random((8, 40)) < 0.7
    for k in (1, 3, 7, 40):
        tops = top_k_indices(x, k, mask)
        bottoms = bottom_k_indices(x, k, mask)
        for i in range(8):
            cand = np.flatnonzero(mask[i])
            full = cand[np.argsort(-x[i, cand], kind="stable")]
            assert tops[i].tolist() == full[:k].tolist()
            assert bottoms[i].tolist() == full[::-1][:k].tolist()
            # ...and with the ranks: the j-th of top-k has rank j.
            np.testing.assert_array_equal(
                ranks(x, mask)[i, tops[i]], np.arange(1, len(tops[i]) + 1)
            )


def test_top_k_empty_pool_row() -> None:
    mask = np.array([[False] * 4, [True] * 4])
    assert as_lists(top_k_indices(S, 2, mask)) == [[], [1, 2]]
    assert as_lists(bottom_k_indices(S, 2, mask)) == [[], [0, 3]]


# --- median split -------------------------------------------------------------------------


def test_median_split_by_hand() -> None:
    # Row 0: median of 3,1,2,2 is 2 -> above {0}, below {1}; the two 2s are neither.
    # Row 1: median of 0,5,5,1 is 3 -> above {1, 2}, below {0, 3}.
    above, below = median_split(S)
    np.testing.assert_array_equal(above, [[1, 0, 0, 0], [0, 1, 1, 0]])
    np.testing.assert_array_equal(below, [[0, 1, 0, 0], [1, 0, 0, 1]])


def test_median_split_masked_by_hand() -> None:
    # Row 0 over {3, 1, 2}: median 2 -> above {0}, below {1}.
    # Row 1 over cols {0, 1, 3} = {0, 5, 1}: median 1 -> above {1}, below {0}; col 3 equals it.
    above, below = median_split(S, M)
    np.testing.assert_array_equal(above, [[1, 0, 0, 0], [0, 1, 0, 0]])
    np.testing.assert_array_equal(below, [[0, 1, 0, 0], [1, 0, 0, 0]])


def test_median_split_degenerate_rows() -> None:
    const = np.full((1, 4), 0.5)
    above, below = median_split(const)
    assert not above.any() and not below.any()
    mask = np.array([[False] * 4, [False, True, False, False]])  # empty pool, single candidate
    above, below = median_split(S, mask)
    assert not above.any() and not below.any()


# --- purity ---------------------------------------------------------------------------------


def test_inputs_are_not_mutated_and_results_are_deterministic() -> None:
    x, m = S.copy(), M.copy()
    calls: list[Callable[[], Any]] = [
        lambda: zscore_rows(x, m),
        lambda: zscore_cols(x, m),
        lambda: ranks(x, m),
        lambda: rrf([x, x], mask=m),
        lambda: top_k_indices(x, 2, m),
        lambda: bottom_k_indices(x, 2, m),
        lambda: median_split(x, m),
    ]
    for call in calls:
        first, second = call(), call()
        for a, b in zip(first, second, strict=True):
            np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(x, S)
    np.testing.assert_array_equal(m, M)


def test_bad_mask_is_rejected() -> None:
    with pytest.raises(ValueError):
        ranks(S, M[:, :3])
    with pytest.raises(ValueError):
        zscore_rows(S, M.astype(np.int8))
    with pytest.raises(ValueError):
        ranks(S[0])


@pytest.mark.parametrize(
    "values", ["continuous", "few distinct", "one row", "one column", "all tied", "no column"]
)
def test_average_ranks_agree_with_scipy_rankdata(values: str):
    from scipy.stats import rankdata

    rng = np.random.default_rng(7)
    shape = {"one row": (1, 57), "one column": (9, 1), "no column": (3, 0)}.get(values, (13, 57))
    S = (
        rng.integers(0, 4, shape).astype(np.float32)
        if values == "few distinct"
        else rng.standard_normal(shape).astype(np.float32)
    )
    if values == "all tied":
        S[:] = 0.25
    S[rng.random(shape) < 0.1] = np.nan  # ranks last, tied with -inf
    S[rng.random(shape) < 0.05] = -np.inf
    S[rng.random(shape) < 0.05] = np.inf
    key = np.nan_to_num(-S.astype(np.float64), nan=np.inf, posinf=np.inf, neginf=-np.inf)
    key[np.isinf(key) & (key > 0)] = np.finfo(np.float64).max
    expected = rankdata(key, method="average", axis=1).astype(np.float32)
    np.testing.assert_array_equal(ranks(S, ties="average"), expected)


def test_average_ties_share_their_rank_and_rrf_uses_them():
    S = np.array([[0.5, 0.9, 0.5, 0.5, 0.1]], dtype=np.float32)
    # 0.9 -> 1; the three 0.5s span ranks 2..4 -> 3 each; 0.1 -> 5
    np.testing.assert_array_equal(ranks(S, ties="average"), [[3, 1, 3, 3, 5]])
    M = np.array([[True, True, False, True, True]])
    np.testing.assert_array_equal(ranks(S, M, ties="average"), [[2.5, 1, np.inf, 2.5, 4]])
    const = np.zeros((1, 5), dtype=np.float32)
    fused = rrf([const])  # a constant channel favours no document
    assert np.all(fused == fused[0, 0])
    assert rrf([const], k=60)[0, 0] == np.float32(1 / 63)
