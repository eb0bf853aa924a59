"""Anchor selection over one query's candidates: portions, tie-breaks, masks, degenerate pools."""

from __future__ import annotations

import numpy as np
import pytest

from embedding_ttc.programs.primitives.anchors import (
    HALF,
    QUARTER,
    bottom_anchor,
    bottom_portion,
    central_anchor,
    diverse_anchor,
    dominant_anchor,
    hardest_negative,
    momentum_anchors,
    portion_size,
    top_portion,
)
from embedding_ttc.programs.primitives.scores import ranks, row_candidates


def at_degrees(*angles: float) -> np.ndarray:
    rad = np.deg2rad(np.asarray(angles, dtype=np.float64))
    return np.stack([np.cos(rad), np.sin(rad)], axis=1)


# Twelve documents; doc i has the i-th best score, so with every document a candidate the top
# quarter is {0, 1, 2}, the top half {0..5} and the bottom half {6..11}.
SCORES = np.linspace(1.0, 0.45, 12)
# Embeddings by angle: the top quarter sits at 0°, 60°, 30°; doc 3 (150°) is the top-half
# document farthest from doc 0; doc 4 (30°) is close to the top-quarter centroid but is not in
# the bottom half; of the bottom half, doc 11 (25°) is closest to that centroid (30°).
D = at_degrees(0, 60, 30, 150, 30, 120, 180, 100, 40, -90, 200, 25)


def test_portion_size_rounds_down_but_keeps_one() -> None:
    assert [portion_size(n, HALF) for n in (1, 2, 3, 4, 5)] == [1, 1, 1, 2, 2]
    assert [portion_size(n, QUARTER) for n in (1, 3, 4, 7, 8, 12)] == [1, 1, 1, 1, 2, 3]
    with pytest.raises(ValueError):
        portion_size(0, HALF)


def test_portions_by_hand() -> None:
    assert top_portion(SCORES, None, QUARTER).tolist() == [0, 1, 2]
    assert top_portion(SCORES, None, HALF).tolist() == [0, 1, 2, 3, 4, 5]
    assert bottom_portion(SCORES, None, HALF).tolist() == [11, 10, 9, 8, 7, 6]


def test_all_candidates_by_hand() -> None:
    assert dominant_anchor(SCORES, None) == 0
    # cosines with doc 0 over the top half minus doc 0: 60° .5, 30° .87, 150° -.87, 30° .87,
    # 120° -.5 -> doc 3.
    assert diverse_anchor(D, SCORES, None, 0) == 3
    # Top quarter at 0°, 60°, 30°: mean cosine to the others is (.5 + .87) / 2 for docs 0 and
    # 1 and (.87 + .87) / 2 for doc 2 -> doc 2.
    assert central_anchor(D, SCORES, None) == 2
    # Top-quarter centroid points at 30°; bottom-half cosines: 180° -.87, 100° .34, 40° .98,
    # -90° -.5, 200° -.98, 25° .996 -> doc 11 (doc 4 at 30° is not in the bottom half).
    assert hardest_negative(D, SCORES, None) == 11
    assert bottom_anchor(SCORES, None) == 11


def test_candidates_restrict_every_choice() -> None:
    # Query ranks {0, 2, 3, 6, 8, 11}: top half {0, 2, 3}, top quarter {0},
    # bottom half (worst first) {11, 8, 6}. Doc 1 scores 100 but is not a candidate.
    scores = SCORES.copy()
    scores[1] = 100.0
    cand = np.array([11, 0, 3, 3, 2, 8, 6])  # unsorted, with a duplicate
    assert dominant_anchor(scores, cand) == 0
    assert diverse_anchor(D, scores, cand, 0) == 3  # 30° .87 vs 150° -.87
    assert central_anchor(D, scores, cand) == 0  # top quarter of one
    # centroid = doc 0 (0°): 25° .91, 40° .77, 180° -1 -> doc 11.
    assert hardest_negative(D, scores, cand) == 11
    assert bottom_anchor(scores, cand) == 11


def test_ties_go_to_the_better_ranked_document() -> None:
    # Score ties: the lower column ranks better; the bottom anchor is the last of the ranking.
    assert dominant_anchor(np.array([0.1, 0.5, 0.5]), None) == 1
    assert bottom_anchor(np.array([0.5, 0.1, 0.1]), None) == 2
    # Criterion ties: docs 1 and 2 are identical vectors, equally far from doc 0.
    d = at_degrees(0, 90, 90, 10, 10, 10, 10, 10)
    s = np.linspace(1.0, 0.3, 8)  # top half {0, 1, 2, 3}
    assert diverse_anchor(d, s, None, 0) == 1
    # Top quarter {0, 1} of 8: two documents always tie on centrality -> the better one.
    assert central_anchor(d, s, None) == 0
    # Bottom half {4..7} all at 10°: tie -> the best-ranked of them, doc 4.
    assert hardest_negative(d, s, None) == 4


def test_momentum_anchors_by_hand() -> None:
    before = np.array([1.0, 2, 3, 4, 5, 6, 7, 8])
    after = np.array([2.0, 3, 8, 1, 4, 5, 6, 7])
    # Top half by `after` (ranks 1..4): docs 3, 0, 1, 4 improved by 3, -1, -1, 1 -> doc 3.
    # Bottom half (ranks 5..8): docs 5, 6, 7, 2 dropped by -1, -1, -1, 5 -> doc 2.
    assert momentum_anchors(before, after, None) == (3, 2)


def test_momentum_anchor_ties() -> None:
    before = np.array([1.0, 2, 3, 4, 5, 6, 7, 8])
    after = np.array([3.0, 4, 5, 1, 2, 8, 6, 7])
    # Top half: docs 3 (1), 4 (2) both improved by 3 -> doc 3, ranked better after.
    # Bottom half: docs 2 (5) and 5 (8) both dropped by 2 -> doc 2, ranked better after.
    assert momentum_anchors(before, after, None) == (3, 2)


def test_momentum_anchors_with_masked_ranks() -> None:
    s_before = np.array([[0.9, 0.8, 0.7, 0.6, 0.5]])
    s_after = np.array([[0.6, 0.9, 0.8, 0.7, 0.1]])
    mask = np.array([[True, False, True, True, True]])
    cand = np.flatnonzero(mask[0])
    rb, ra = ranks(s_before, mask)[0], ranks(s_after, mask)[0]
    # Candidates {0, 2, 3, 4}: before ranks 1, 2, 3, 4; after ranks 3, 1, 2, 4.
    # Top half (after) {2, 3}: improved by 1, 1 -> doc 2. Bottom half {4, 0}: dropped 0, 2 -> 0.
    assert momentum_anchors(rb, ra, cand) == (2, 0)
    with pytest.raises(ValueError):
        momentum_anchors(rb, ra, None)  # doc 1 has an infinite rank


def test_single_candidate_is_every_anchor() -> None:
    cand = np.array([7])
    assert dominant_anchor(SCORES, cand) == 7
    assert diverse_anchor(D, SCORES, cand, 7) == 7
    assert central_anchor(D, SCORES, cand) == 7
    assert hardest_negative(D, SCORES, cand) == 7
    assert bottom_anchor(SCORES, cand) == 7
    assert momentum_anchors(np.arange(1.0, 13), np.arange(1.0, 13), cand) == (7, 7)


def test_two_candidates_keep_positive_and_negative_apart() -> None:
    cand = np.array([4, 9])
    assert top_portion(SCORES, cand, HALF).tolist() == [4]
    assert bottom_portion(SCORES, cand, HALF).tolist() == [9]
    assert diverse_anchor(D, SCORES, cand, 4) == 4  # the top half is the dominant alone
    assert hardest_negative(D, SCORES, cand) == 9


def test_empty_pool_and_bad_shapes_are_errors() -> None:
    empty = np.array([], dtype=np.intp)
    with pytest.raises(ValueError):
        dominant_anchor(SCORES, empty)
    with pytest.raises(ValueError):
        central_anchor(D[:5], SCORES, None)
    with pytest.raises(ValueError):
        hardest_negative(D, SCORES, np.array([12]))


def test_inputs_not_mutated_and_deterministic() -> None:
    d, s = D.copy(), SCORES.copy()
    cand = np.array([0, 2, 3, 6, 8, 11])
    cand_copy = cand.copy()
    for _ in range(2):
        got = (
            dominant_anchor(s, cand),
            diverse_anchor(d, s, cand, 0),
            central_anchor(d, s, cand),
            hardest_negative(d, s, cand),
            bottom_anchor(s, cand),
            momentum_anchors(np.arange(1.0, 13), np.arange(12.0, 0, -1), cand),
        )
        assert got == (0, 3, 0, 11, 11, (11, 0))
    np.testing.assert_array_equal(d, D)
    np.testing.assert_array_equal(s, SCORES)
    np.testing.assert_array_equal(cand, cand_copy)
    assert all(type(x) is int for x in got[:5])


@pytest.mark.parametrize("seed", range(6))
def test_central_anchor_is_the_argmax_of_the_gram_row_sums_without_self_loops(seed):
    rng = np.random.default_rng(seed)
    n_d = int(rng.integers(4, 400))
    d = rng.normal(size=(n_d, 16))
    d[rng.integers(0, n_d, size=n_d // 5)] = d[0]  # duplicate documents tie exactly
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    scores = rng.normal(size=n_d)
    cand = np.sort(rng.choice(n_d, size=int(rng.integers(1, n_d + 1)), replace=False))
    for c in (None, cand):
        top = top_portion(scores, c, QUARTER)
        gram = d[top] @ d[top].T
        if top.size == 1:
            expected = int(top[0])
        else:
            centrality = (gram.sum(axis=1) - np.diag(gram)) / (top.size - 1)
            # the first (best-ranked) of the documents as central as the most central one
            expected = int(top[np.flatnonzero(centrality >= centrality.max() - 1e-12)[0]])
        assert central_anchor(d, scores, c) == expected


def test_row_candidates_sorts_and_dedupes_only_when_it_must():
    assert row_candidates(np.array([1, 3, 7]), 8).tolist() == [1, 3, 7]
    assert row_candidates(np.array([7, 3, 3, 1]), 8).tolist() == [1, 3, 7]
    given = np.array([0, 2], dtype=np.intp)
    out = row_candidates(given, 3)
    out[0] = 2  # a copy: the caller's candidates are never aliased
    assert given.tolist() == [0, 2]
    with pytest.raises(ValueError, match="outside"):
        row_candidates(np.array([0, 3]), 3)
