"""ConvexHybrid and WeightedRRF against numbers worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from embedding_ttc.programs.base import Context
from embedding_ttc.programs.catalog import get_program
from embedding_ttc.programs.library.convex_hybrid import ConvexHybrid
from embedding_ttc.programs.library.weighted_rrf import WeightedRRF
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import minmax_rows, zscore_rows

DOCS = ("apple pie recipe", "banana bread", "apple apple cider", "car engine repair")
QUERIES = ("apple", "engine")


def _no_encoder(*args: object, **kwargs: object) -> np.ndarray:
    raise AssertionError("a fusion baseline must not call the encoder")


def _ctx(candidates: list[np.ndarray] | None = None) -> Context:
    return Context(
        encode_fn=_no_encoder,  # type: ignore[arg-type]  # a fake that refuses every call
        query_texts=QUERIES,
        doc_texts=DOCS,
        query_ids=("q1", "q2"),
        doc_ids=("d1", "d2", "d3", "d4"),
        candidates=candidates,
    )


S = np.array([[0.9, 0.1, 0.5, 0.3], [0.2, 0.4, 0.0, 0.8]], dtype=np.float32)


def test_minmax_rows_by_hand() -> None:
    out = minmax_rows(S)
    # Row 1: min 0.1, max 0.9 -> (0.9-0.1)/0.8 = 1, 0, (0.5-0.1)/0.8 = 0.5, (0.3-0.1)/0.8 = 0.25.
    np.testing.assert_allclose(out[0], [1.0, 0.0, 0.5, 0.25], atol=1e-6)
    np.testing.assert_allclose(out[1], [0.25, 0.5, 0.0, 1.0], atol=1e-6)


def test_minmax_rows_over_candidates_only() -> None:
    mask = np.array([[True, False, True, False], [False, True, True, True]])
    out = minmax_rows(S, mask)
    # Row 1 over d1, d3: min 0.5, max 0.9 -> 1 and 0; the rest 0.
    np.testing.assert_allclose(out[0], [1.0, 0.0, 0.0, 0.0], atol=1e-6)
    # Row 2 over d2..d4: min 0.0, max 0.8 -> 0.5, 0, 1.
    np.testing.assert_allclose(out[1], [0.0, 0.5, 0.0, 1.0], atol=1e-6)


def test_a_constant_row_normalises_to_zero() -> None:
    out = minmax_rows(np.full((1, 3), 0.7, dtype=np.float32))
    assert out.tolist() == [[0.0, 0.0, 0.0]]


def test_convex_hybrid_minmax_by_hand() -> None:
    bm25 = BM25.fit(DOCS).scores(QUERIES)
    # "apple" is in d1 and d3 only, "engine" in d4 only: BM25 is 0 elsewhere.
    assert bm25[0, 1] == bm25[0, 3] == 0.0 and bm25[1, :3].tolist() == [0.0, 0.0, 0.0]
    out = ConvexHybrid(alpha=0.25, norm="minmax")(S, S, S, _ctx())
    lexical = bm25[0] / bm25[0].max()  # min is 0
    expected = 0.25 * np.array([1.0, 0.0, 0.5, 0.25]) + 0.75 * lexical
    np.testing.assert_allclose(out[0], expected, atol=1e-6)
    # Query 2: BM25 is 1 on d4 alone after min-max; the cosine's min-max is [0.25, 0.5, 0, 1].
    np.testing.assert_allclose(out[1], [0.0625, 0.125, 0.0, 1.0], atol=1e-6)


def test_convex_hybrid_zscore_is_the_weighted_sum_of_row_zscores() -> None:
    bm25 = BM25.fit(DOCS).scores(QUERIES)
    out = ConvexHybrid(alpha=0.7, norm="zscore")(S, S, S, _ctx())
    expected = 0.7 * zscore_rows(S).astype(np.float64) + 0.3 * zscore_rows(bm25)
    np.testing.assert_allclose(out, expected, atol=1e-6)


def test_weighted_rrf_by_hand() -> None:
    out = WeightedRRF(w=0.8)(S, S, S, _ctx())
    # Query 2: cosine ranks d4 1, d2 2, d1 3, d3 4; BM25 ranks d4 1 and ties d1..d3 at the
    # average rank (2 + 3 + 4) / 3 = 3.
    k = 60
    for col, dense_rank in zip(range(4), (3, 2, 4, 1), strict=True):
        lexical_rank = 1 if col == 3 else 3
        assert out[1, col] == pytest.approx(0.8 / (k + dense_rank) + 0.2 / (k + lexical_rank))


def test_weighted_rrf_at_half_ranks_as_plain_rrf() -> None:
    from embedding_ttc.programs.library.bm25_dense_rrf import BM25DenseRRF

    half = WeightedRRF(w=0.5)(S, S, S, _ctx())
    plain = BM25DenseRRF()(S, S, S, _ctx())
    np.testing.assert_allclose(2 * half.astype(np.float64), plain, atol=1e-6)


def test_candidates_only_and_zero_elsewhere() -> None:
    cands = [np.array([0, 2]), np.array([1, 3])]
    for program in (ConvexHybrid(), ConvexHybrid(norm="zscore"), WeightedRRF()):
        out = program(S, S, S, _ctx(cands))
        assert out[0, 1] == out[0, 3] == out[1, 0] == out[1, 2] == 0.0
        assert np.isfinite(out).all()


def test_the_defaults_are_the_discovery_grids_best_cells() -> None:
    assert (ConvexHybrid().norm, ConvexHybrid().alpha) == ("zscore", 0.5)
    assert ConvexHybrid(norm="minmax").alpha == 0.3
    assert WeightedRRF().w == 0.1
    named = get_program("ConvexHybrid:alpha=0.5,norm=zscore")
    np.testing.assert_array_equal(named(S, S, S, _ctx()), ConvexHybrid()(S, S, S, _ctx()))


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: ConvexHybrid(alpha=1.5), "alpha"),
        (lambda: ConvexHybrid(norm="l2"), "norm"),
        (lambda: WeightedRRF(w=-0.1), "w must"),
        (lambda: WeightedRRF(k=-1), "k must"),
    ],
)
def test_bad_parameters_are_named(build, message) -> None:
    with pytest.raises(ValueError, match=message):
        build()
