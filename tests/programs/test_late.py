"""Chunk-level MaxSim and TopMeanSim: hand-computed values, masks, layout checks, memory."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable

import numpy as np
import pytest

from embedding_ttc.programs.primitives.late import (
    BLOCK_ELEMENTS,
    _kept,
    _row_median,
    maxsim,
    maxsim_topmeansim,
    maxsim_topmeansim_of,
    topmeansim,
)


def unit_2d(cosines: list[float]) -> np.ndarray:
    """Unit vectors whose cosine with [1, 0] is each given value."""
    c = np.asarray(cosines)
    return np.stack([c, np.sqrt(1.0 - c**2)], axis=1).astype(np.float32)


# Query 0 is [1, 0], so its cosine with chunk j is exactly the first coordinate; query 1 is
# [-1, 0], the negated cosines.
Q = np.array([[1.0, 0.0], [-1.0, 0.0]], dtype=np.float32)
# doc 0 owns chunks with cosines 0.9, 0.7, 0.1; doc 1 owns 0.5; doc 2 owns 0.3, 0.8.
C = unit_2d([0.9, 0.7, 0.1, 0.5, 0.3, 0.8])
OWNER = np.array([0, 0, 0, 1, 2, 2])


def test_maxsim_by_hand() -> None:
    # q0: max(0.9, 0.7, 0.1) = 0.9, 0.5, max(0.3, 0.8) = 0.8.
    # q1: max(-0.9, -0.7, -0.1) = -0.1, -0.5, max(-0.3, -0.8) = -0.3.
    out = maxsim(Q, C, OWNER, 3)
    assert out.dtype == np.float32
    assert out.shape == (2, 3)
    np.testing.assert_allclose(out, [[0.9, 0.5, 0.8], [-0.1, -0.5, -0.3]], atol=1e-6)


def test_topmeansim_by_hand() -> None:
    # q0 sims sorted: 0.1 0.3 0.5 0.7 0.8 0.9 -> median (0.5 + 0.7) / 2 = 0.6.
    #   Above it: 0.9, 0.7 (doc 0) -> mean 0.8; doc 1 has none -> falls back to its max 0.5;
    #   0.8 (doc 2) -> 0.8.
    # q1 sims sorted: -0.9 -0.8 -0.7 -0.5 -0.3 -0.1 -> median -0.6.
    #   Above it: -0.1 (doc 0), -0.5 (doc 1), -0.3 (doc 2) -> -0.1, -0.5, -0.3.
    out = topmeansim(Q, C, OWNER, 3)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[0.8, 0.5, 0.8], [-0.1, -0.5, -0.3]], atol=1e-6)


def test_topmeansim_median_over_candidates_only() -> None:
    # q0 ranks only doc 0: median of 0.9, 0.7, 0.1 is 0.7 -> only 0.9 is above -> 0.9
    # (0.8 without the mask). q1 ranks docs 1 and 2: median of -0.5, -0.3, -0.8 is -0.5
    # -> above: -0.3 (doc 2); doc 1 falls back to its max -0.5.
    mask = np.array([[True, False, False], [False, True, True]])
    out = topmeansim(Q, C, OWNER, 3, mask=mask)
    np.testing.assert_allclose(out, [[0.9, 0.0, 0.0], [0.0, -0.5, -0.3]], atol=1e-6)


def test_maxsim_mask_zeroes_non_candidates_only() -> None:
    mask = np.array([[True, False, True], [False, False, False]])
    out = maxsim(Q, C, OWNER, 3, mask=mask)
    np.testing.assert_allclose(out, [[0.9, 0.0, 0.8], [0.0, 0.0, 0.0]], atol=1e-6)
    # A query with no candidate at all is all zeros for TopMeanSim too.
    np.testing.assert_array_equal(topmeansim(Q, C, OWNER, 3, mask=mask)[1], 0.0)


def test_single_chunk_documents_reduce_to_cosine() -> None:
    rng = np.random.default_rng(0)
    q = rng.normal(size=(3, 5)).astype(np.float32)
    d = rng.normal(size=(4, 5)).astype(np.float32)
    owner = np.arange(4)
    np.testing.assert_allclose(maxsim(q, d, owner, 4), q @ d.T, rtol=1e-5)
    # Each document's single chunk is either above the median (mean = itself) or not
    # (fallback = its max = itself): TopMeanSim is the cosine as well.
    np.testing.assert_allclose(topmeansim(q, d, owner, 4), q @ d.T, rtol=1e-5)


@pytest.mark.parametrize("block_elements", [1, 7, 64, BLOCK_ELEMENTS])
def test_blocking_does_not_change_results(block_elements: int) -> None:
    rng = np.random.default_rng(1)
    q = rng.normal(size=(9, 6)).astype(np.float32)
    c = rng.normal(size=(20, 6)).astype(np.float32)
    owner = np.repeat(np.arange(7), [1, 5, 2, 3, 4, 1, 4])
    mask = rng.random((9, 7)) < 0.7
    sims = q @ c.T
    expected = np.stack([sims[:, owner == j].max(axis=1) for j in range(7)], axis=1)
    # BLAS may round a 1-row product differently from a 9-row one: equal up to float32 eps.
    got = maxsim(q, c, owner, 7, block_elements=block_elements)
    np.testing.assert_allclose(got, expected, atol=1e-6)
    base = topmeansim(q, c, owner, 7, mask=mask)
    got = topmeansim(q, c, owner, 7, mask=mask, block_elements=block_elements)
    np.testing.assert_allclose(got, base, atol=1e-6)


def test_reducing_given_similarities_is_the_reduction_of_their_product() -> None:
    # The live path hands its own similarities: the same reduction, bit for bit, as when
    # the product is taken inside (one block, every document a candidate).
    rng = np.random.default_rng(2)
    q = rng.normal(size=(3, 6)).astype(np.float32)
    c = rng.normal(size=(20, 6)).astype(np.float32)
    owner = np.repeat(np.arange(7), [1, 5, 2, 3, 4, 1, 4])
    want = maxsim_topmeansim(q, c, owner, 7)
    got = maxsim_topmeansim_of(q @ c.T, owner, 7)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == np.float32
        np.testing.assert_array_equal(g, w)
    by_hand = maxsim_topmeansim_of(Q @ C.T, OWNER, 3)
    np.testing.assert_allclose(by_hand[0][0], [0.9, 0.5, 0.8], atol=1e-6)
    with pytest.raises(ValueError, match="2-D"):
        maxsim_topmeansim_of(np.zeros(6, dtype=np.float32), OWNER, 3)
    with pytest.raises(ValueError):
        maxsim_topmeansim_of(Q @ C.T, OWNER[:-1], 3)
    empty = maxsim_topmeansim_of(np.zeros((2, 0), np.float32), np.zeros(0, np.intp), 0)
    assert [e.shape for e in empty] == [(2, 0), (2, 0)]


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return (
        a.dtype == b.dtype
        and np.array_equal(a, b, equal_nan=True)
        and np.array_equal(np.signbit(a), np.signbit(b))
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_median_and_kept_values_are_numpys_bit_for_bit(dtype) -> None:
    # TopMeanSim's median and its masked values are computed faster than np.median and
    # np.where; the evaluation records depend on their bits, NaN, inf, -0.0 and ties included.
    rng = np.random.default_rng(3)
    for trial in range(400):
        rows, n = rng.integers(1, 6), rng.integers(1, 60)
        x = rng.standard_normal((rows, n)).astype(dtype)
        if trial % 3 == 0:
            x = np.round(x, 1)  # ties
        if trial % 5 == 0:
            x = np.where(rng.random(x.shape) < 0.5, -0.0, x).astype(dtype)
        if trial % 7 == 0:
            x[0, rng.integers(n)] = np.nan
        if trial % 11 == 0:
            x[-1, rng.integers(n)] = np.inf
        if trial % 13 == 0:
            x[-1, rng.integers(n)] = -np.inf
        if trial % 17 == 0:
            x[:] = -0.0
        with np.errstate(invalid="ignore"):
            want = np.median(x, axis=1, keepdims=True)
        assert _same_bits(_row_median(x), want), x
        above = x > np.where(np.isnan(want), np.inf, want)
        assert _same_bits(_kept(x, above), np.where(above, x, 0.0)), x


def test_inputs_not_mutated_and_deterministic() -> None:
    q, c, owner = Q.copy(), C.copy(), OWNER.copy()
    mask = np.array([[True, True, False], [True, False, True]])
    for fn in (maxsim, topmeansim):
        first = fn(q, c, owner, 3, mask=mask)
        np.testing.assert_array_equal(first, fn(q, c, owner, 3, mask=mask))
    np.testing.assert_array_equal(q, Q)
    np.testing.assert_array_equal(c, C)
    np.testing.assert_array_equal(owner, OWNER)


@pytest.mark.parametrize(
    ("owner", "n_docs"),
    [
        (np.array([1, 1, 1, 1, 2, 2]), 3),  # doc 0 owns no chunk
        (np.array([0, 0, 2, 2, 2, 2]), 3),  # doc 1 owns no chunk
        (np.array([0, 1, 0, 1, 2, 2]), 3),  # not non-decreasing
        (np.array([0, 0, 0, 1, 1, 1]), 3),  # doc 2 owns no chunk
        (np.array([0, 0, 1, 2]), 3),  # wrong length
    ],
)
def test_bad_owner_layout_is_rejected(owner: np.ndarray, n_docs: int) -> None:
    with pytest.raises(ValueError):
        maxsim(Q, C, owner, n_docs)


def test_empty_corpus_and_width_mismatch() -> None:
    out = maxsim(Q, np.zeros((0, 2), dtype=np.float32), np.zeros(0, dtype=np.intp), 0)
    assert out.shape == (2, 0)
    with pytest.raises(ValueError):
        maxsim(Q, np.zeros((6, 3), dtype=np.float32), OWNER, 3)


@pytest.mark.parametrize("fn", [maxsim, topmeansim])
def test_memory_stays_bounded_on_a_large_input(fn: Callable[..., np.ndarray]) -> None:
    # 500 queries x 40,000 chunks would be an 80 MB similarity matrix; with a 2**19-element
    # block the working set is a few 2 MB blocks plus the 4 MB output. Shapes only, no timing.
    n_q, n_docs, per_doc, dim = 500, 2_000, 20, 8
    rng = np.random.default_rng(2)
    q = rng.normal(size=(n_q, dim)).astype(np.float32)
    c = rng.normal(size=(n_docs * per_doc, dim)).astype(np.float32)
    owner = np.repeat(np.arange(n_docs), per_doc)
    full_bytes = n_q * c.shape[0] * 4
    tracemalloc.start()
    try:
        out = fn(q, c, owner, n_docs, block_elements=1 << 19)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out.shape == (n_q, n_docs)
    assert np.isfinite(out).all()
    assert peak < full_bytes / 4


@pytest.mark.parametrize("block_elements", [BLOCK_ELEMENTS, 7])
@pytest.mark.parametrize("masked", [False, True])
def test_maxsim_topmeansim_are_the_two_functions_bit_for_bit(block_elements, masked):
    rng = np.random.default_rng(3)
    owner = np.repeat(np.arange(6), [1, 3, 2, 4, 1, 2])
    C = rng.standard_normal((owner.size, 8)).astype(np.float32)
    Q = rng.standard_normal((5, 8)).astype(np.float32)
    mask = rng.random((5, 6)) < 0.6 if masked else None
    both = maxsim_topmeansim(Q, C, owner, 6, mask=mask, block_elements=block_elements)
    alone = (
        maxsim(Q, C, owner, 6, mask=mask, block_elements=block_elements),
        topmeansim(Q, C, owner, 6, mask=mask, block_elements=block_elements),
    )
    for got, want in zip(both, alone, strict=True):
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, want)
