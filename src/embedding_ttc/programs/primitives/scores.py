"""Score-matrix primitives: z-scores, min-max, ranks, reciprocal rank fusion and top-k selection.

Every function here is pure numpy: it calls no encoder, never mutates its inputs, is
deterministic, and returns ``float32`` scores (or ``intp`` indices, or boolean masks).

The candidate mask convention
-----------------------------
Many tasks are reranking tasks in which each query ranks only its own candidate set
(``Context.candidates``), and a program's shortlist mode does the same. Every primitive in
``embedding_ttc.programs.primitives`` that computes per-query statistics, rankings or top-k
selections therefore takes ``mask: NDArray[np.bool_] | None`` of shape ``(n_q, n_d)``:

* ``mask[i, j]`` is True when document ``j`` is a candidate of query ``i``; ``None`` means
  every document is a candidate of every query (build a mask with :func:`candidate_mask`);
* statistics (means, deviations, medians), ranks and selections are computed over the
  candidates only, so a non-candidate's score never moves a candidate's value;
* outputs at non-candidate positions are ``0.0`` for scores (finite, so a program that sums
  channels stays finite) and ``+inf`` for ranks (so ``1 / (k + rank)`` is exactly 0);
* scores at candidate positions are expected to be finite; scores at non-candidate positions
  are never read, so they may be anything, NaN included.

The ranking order used throughout (by :func:`ranks`, :func:`top_k_indices` and
:func:`bottom_k_indices`, and by the anchor selectors) is: higher score first, ties broken by
the lower column index, NaN last. It is the total order ``(-score, column)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

# What the search's prompt lists (``search.prompts.primitives``): the names it listed before
# :func:`minmax_rows` moved here, so the prompt stays as it was; every public name imports.
__all__ = [  # noqa: RUF022 (source order, the order the prompt lists them in)
    "ZSCORE_EPS",
    "RRF_K",
    "candidate_mask",
    "zscore_rows",
    "zscore_cols",
    "ranks",
    "rrf",
    "row_candidates",
    "row_top_k",
    "row_bottom_k",
    "top_k_indices",
    "bottom_k_indices",
    "median_split",
]

Mask = NDArray[np.bool_]
"""Boolean ``(n_q, n_d)`` candidate mask; see the module docstring."""

Scores = NDArray[np.float32]
"""A ``float32`` score (or rank) matrix."""

Ties = Literal["first", "average"]
"""How :func:`ranks` orders equal scores."""

ZSCORE_EPS: float = 1e-6
"""Population standard deviations at or below this are treated as zero by the z-scores.

A row or column whose candidates all carry the same score (up to float32 resolution of a
cosine, about 6e-8) has no spread to standardise by; its z-scores are defined as 0 rather
than NaN or an amplified rounding error.
"""

RRF_K: int = 60
"""The rank offset ``k`` of reciprocal rank fusion (Cormack, Clarke & Buettcher 2009).

The paper (App. A.5) prints ``RRF(d) = sum_i 1/rank_i(d)``, i.e. ``k = 0``. We use the classic
``k = 60`` of Cormack et al., who found it robust across collections. With ``k = 0`` the head
of each ranking dominates: a document ranked first by one of two channels and 100th by the
other scores 1 + 1/100, more than one ranked second by both (1/2 + 1/2), so the fusion acts
like a max over channels. With ``k = 60`` the same two score 1/61 + 1/160 = 0.023 and
2/62 = 0.032: agreement across channels decides, which is what the paper's cross-round RRF
asks of it ("requiring a document to rank consistently across all rounds"). Pass ``k=0`` to
reproduce the formula as printed.
"""


def candidate_mask(
    n_q: int, n_d: int, candidates: Sequence[NDArray[np.intp]] | None
) -> Mask | None:
    """Build the ``(n_q, n_d)`` candidate mask from ``Context.candidates``.

    Args:
        n_q: number of queries (rows).
        n_d: number of documents (columns).
        candidates: per query, the column indices it ranks; ``None`` when every query ranks
            the whole corpus.

    Returns:
        ``None`` when ``candidates`` is ``None`` (all documents are candidates), else a new
        boolean mask with ``mask[i, j]`` True iff ``j`` is in ``candidates[i]``.

    Raises:
        ValueError: if there is not one candidate array per query, or an index is not an
            integer in ``[0, n_d)``.

    """
    if candidates is None:
        return None
    if len(candidates) != n_q:
        raise ValueError(f"expected {n_q} candidate arrays, got {len(candidates)}")
    mask = np.zeros((n_q, n_d), dtype=np.bool_)
    for row, cand in enumerate(candidates):
        mask[row, _check_indices(cand, n_d, f"candidates[{row}]")] = True
    return mask


def zscore_rows(S: ArrayLike, mask: Mask | None = None) -> Scores:
    """Standardise each row over its candidates: ``(s - mean) / std`` (population std).

    Args:
        S: ``(n_q, n_d)`` scores.
        mask: candidate mask (module docstring); ``None`` means all candidates.

    Returns:
        A new ``float32`` matrix. A row whose candidate std is at most :data:`ZSCORE_EPS`
        (constant row, single candidate) is all 0; non-candidates are 0.

    """
    return _zscore(S, mask, axis=1)


def zscore_cols(S: ArrayLike, mask: Mask | None = None) -> Scores:
    """Standardise each column over the queries that have it as a candidate.

    This is the per-document normalisation of *BidirZScore* (paper App. A.1): how many
    standard deviations above its per-document mean a given query scores.

    Args:
        S: ``(n_q, n_d)`` scores.
        mask: candidate mask (module docstring); ``None`` means all candidates.

    Returns:
        A new ``float32`` matrix. A column whose std over its candidate rows is at most
        :data:`ZSCORE_EPS` is all 0; non-candidates are 0.

    """
    return _zscore(S, mask, axis=0)


def minmax_rows(S: ArrayLike, mask: Mask | None = None) -> Scores:
    """Scale each row to ``[0, 1]`` over its candidates: ``(s - min) / (max - min)``.

    The ``minmax`` normaliser of Elasticsearch's and OpenSearch's linear retriever, per query;
    Lee (1997) and Bruch, Gai and Ingber (TOIS 2023) pair it with score fusion: every channel
    spans ``[0, 1]`` for every query, so a fixed convex weight means the same on every task.

    Args:
        S: ``(n_q, n_d)`` scores.
        mask: candidate mask (module docstring); ``None`` means all candidates.

    Returns:
        A new ``float32`` matrix: each query's best candidate 1, its worst 0. A row whose
        candidates span at most :data:`ZSCORE_EPS` (one candidate, a constant row) has no
        spread to scale by and is all 0, as a constant row's z-scores are; non-candidates are 0
        and never read (NaN there is harmless).

    """
    cand = np.ones(np.shape(S), dtype=bool) if mask is None else mask
    x = np.where(cand, S, 0.0).astype(np.float64)
    low = x.min(axis=1, keepdims=True, where=cand, initial=np.inf)
    high = x.max(axis=1, keepdims=True, where=cand, initial=-np.inf)
    span = high - low
    spread = span > ZSCORE_EPS
    scaled = np.where(spread, (x - low) / np.where(spread, span, 1.0), 0.0)
    return np.where(cand, scaled, 0.0).astype(np.float32)


def ranks(S: ArrayLike, mask: Mask | None = None, ties: Ties = "first") -> Scores:
    """1-based rank of each candidate within its row (best score = 1).

    With ``ties="first"`` ties are broken by column index (the lower index ranks better), so the
    ranks of a row's candidates are exactly ``1 .. n_candidates``; a NaN candidate score ranks
    last. With ``ties="average"`` tied candidates share the mean of the ranks they span (NaN and
    -inf candidates tie with each other at the bottom), so a channel's ties never reward a
    document for where it stands in the corpus file.

    Args:
        S: ``(n_q, n_d)`` scores.
        mask: candidate mask (module docstring); ``None`` means all candidates.
        ties: ``"first"`` (column order) or ``"average"``.

    Returns:
        A new ``float32`` matrix of ranks (exact for up to 2**24 documents), ``+inf`` at
        non-candidates.

    """
    x = _as_matrix(S)
    m = _check_mask(mask, x.shape)
    key = _sort_key(x)
    if ties == "average":
        # Candidates that rank last (NaN or -inf scores) tie at the largest finite key;
        # non-candidates sit at +inf behind them and are overwritten below.
        key = np.where(np.isnan(key) | np.isposinf(key), np.finfo(np.float64).max, key)
        if m is None:
            return _average_ranks(key).astype(np.float32)
        # A masked row is mostly non-candidates tied at +inf: one long run, which the stable
        # sort of rankdata detects, beating the quicksort (37 against 62 ms on 300 x 5,183
        # with 30 candidates a row).
        from scipy.stats import rankdata

        key = np.where(m, key, np.inf)
        averaged: Scores = np.asarray(rankdata(key, method="average", axis=1), dtype=np.float32)
        averaged[~m] = np.inf
        return averaged
    if ties != "first":
        raise ValueError(f"ties must be 'first' or 'average', got {ties!r}")
    if m is not None:
        # NaN sorts after every number, +inf included: non-candidates go to the end.
        key = np.where(m, key, np.nan)
    order = np.argsort(key, axis=1, kind="stable")
    positions = np.arange(1, x.shape[1] + 1, dtype=np.float32)
    out = np.empty(x.shape, dtype=np.float32)
    np.put_along_axis(out, order, np.broadcast_to(positions, x.shape), axis=1)
    if m is not None:
        out[~m] = np.inf
    return out


def rrf(
    channels: Sequence[ArrayLike],
    *,
    mask: Mask | None = None,
    k: int = RRF_K,
    ties: Ties = "average",
) -> Scores:
    """Reciprocal rank fusion: ``RRF(d) = sum_i 1 / (k + rank_i(d))``.

    Tied documents in a channel share their average rank (``ties="average"``, the default), so
    a coarse channel (bigram overlap, a constant row) adds no bonus that depends only on the
    order of the corpus file.

    Cormack, Clarke & Buettcher (2009), "Reciprocal rank fusion outperforms Condorcet and
    individual rank learning methods"; the fusion of the paper's App. A.5 (*LexicalHybridRRF*)
    and A.6 (*CrossRoundRRF*). See :data:`RRF_K` for the choice ``k = 60``.

    Args:
        channels: one or more ``(n_q, n_d)`` score matrices (higher is better); each is ranked
            with :func:`ranks` under ``mask``.
        mask: candidate mask (module docstring); ``None`` means all candidates. By keyword
            only, as are ``k`` and ``ties``: ``fuse`` takes weights second.
        k: the rank offset, ``k >= 0``.
        ties: how :func:`ranks` treats ties within a channel.

    Returns:
        A new ``float32`` matrix of fused scores, 0 at non-candidates.

    Raises:
        ValueError: if ``channels`` is empty, the shapes differ, or ``k < 0``.

    """
    if len(channels) == 0:
        raise ValueError("rrf needs at least one channel")
    if k < 0:
        raise ValueError(f"rrf offset k must be >= 0, got {k}")
    mats = [_as_matrix(c) for c in channels]
    shape = mats[0].shape
    if any(c.shape != shape for c in mats):
        raise ValueError(f"rrf channels differ in shape: {[c.shape for c in mats]}")
    total = np.zeros(shape, dtype=np.float64)
    for mat in mats:
        total += 1.0 / (k + ranks(mat, mask, ties).astype(np.float64))  # 1 / inf = 0 off-candidate
    return total.astype(np.float32)


def row_candidates(cand: ArrayLike | None, n_d: int) -> NDArray[np.intp]:
    """One query's candidate columns, sorted and de-duplicated.

    Sorting makes positional tie-breaks coincide with column-index tie-breaks.

    Args:
        cand: the query's candidate column indices (``Context.candidates[i]``); ``None`` = all.
        n_d: number of documents.

    Returns:
        A new ``intp`` array (``arange(n_d)`` when ``cand`` is ``None``).

    Raises:
        ValueError: if an index is not an integer in ``[0, n_d)``.

    """
    if cand is None:
        return np.arange(n_d, dtype=np.intp)
    idx = _check_indices(cand, n_d, "cand")
    if idx.size < 2 or bool(np.all(idx[1:] > idx[:-1])):
        same: NDArray[np.intp] = idx.copy()  # sorted, unique (as the evaluator's are): O(n)
        return same
    return np.unique(idx)


def row_top_k(
    scores_row: ArrayLike, k: int, cand: NDArray[np.intp] | None = None
) -> NDArray[np.intp]:
    """The ``k`` best candidate columns of one row, best first.

    Args:
        scores_row: ``(n_d,)`` scores of one query.
        k: how many to return, ``k >= 0`` (fewer when there are fewer candidates).
        cand: the query's candidate column indices (duplicates are ignored); ``None`` = all.

    Returns:
        Column indices in the ranking order of the module docstring (ties by column index).

    """
    row = _as_row(scores_row)
    idx = row_candidates(cand, row.shape[0])
    return idx[_first_k(_sort_key(row[idx]), _check_k(k))]


def row_bottom_k(
    scores_row: ArrayLike, k: int, cand: NDArray[np.intp] | None = None
) -> NDArray[np.intp]:
    """The ``k`` worst candidate columns of one row, worst first.

    The result is the tail of the ranking of :func:`row_top_k` read backwards, so among tied
    scores the *higher* column index comes first.

    Args:
        scores_row: ``(n_d,)`` scores of one query.
        k: how many to return, ``k >= 0`` (fewer when there are fewer candidates).
        cand: the query's candidate column indices (duplicates are ignored); ``None`` = all.

    Returns:
        Column indices, worst first.

    """
    row = _as_row(scores_row)
    idx = row_candidates(cand, row.shape[0])[::-1]
    return idx[_first_k(-_sort_key(row[idx]), _check_k(k))]


def top_k_indices(S: ArrayLike, k: int, mask: Mask | None = None) -> list[NDArray[np.intp]]:
    """Per row, the ``k`` best candidate column indices, best first.

    Args:
        S: ``(n_q, n_d)`` scores.
        k: how many per row, ``k >= 0``; a row with fewer candidates returns all of them.
        mask: candidate mask (module docstring); ``None`` means all candidates.

    Returns:
        One ``intp`` array per row, in the ranking order of the module docstring.

    """
    x = _as_matrix(S)
    m = _check_mask(mask, x.shape)
    return [row_top_k(x[i], k, None if m is None else np.flatnonzero(m[i])) for i in range(len(x))]


def bottom_k_indices(S: ArrayLike, k: int, mask: Mask | None = None) -> list[NDArray[np.intp]]:
    """Per row, the ``k`` worst candidate column indices, worst first (see :func:`row_bottom_k`).

    Args:
        S: ``(n_q, n_d)`` scores.
        k: how many per row, ``k >= 0``; a row with fewer candidates returns all of them.
        mask: candidate mask (module docstring); ``None`` means all candidates.

    Returns:
        One ``intp`` array per row, worst first (ties: higher column index first).

    """
    x = _as_matrix(S)
    m = _check_mask(mask, x.shape)
    return [
        row_bottom_k(x[i], k, None if m is None else np.flatnonzero(m[i])) for i in range(len(x))
    ]


def median_split(S: ArrayLike, mask: Mask | None = None) -> tuple[Mask, Mask]:
    """Per row, the candidates strictly above and strictly below the row's median score.

    The split of *CrossRoundRRF* (paper App. A.6): "positive and negative centroids from
    documents above and below the per-query median RRF score". The median is ``np.median``
    over the row's candidates (the mean of the two middle values for an even count).
    Candidates *equal* to the median belong to neither side, so a constant row, or a single
    candidate, gives two empty sides; a caller building centroids must handle empty sets.

    Args:
        S: ``(n_q, n_d)`` scores.
        mask: candidate mask (module docstring); ``None`` means all candidates.

    Returns:
        ``(above, below)``: two new boolean ``(n_q, n_d)`` masks, False at non-candidates.

    """
    x = _as_matrix(S)
    m = _check_mask(mask, x.shape)
    if m is None:
        med = np.median(x, axis=1, keepdims=True)
        return x > med, x < med
    med = np.full((x.shape[0], 1), np.nan)
    has = m.any(axis=1)
    if has.any():
        med[has, 0] = np.nanmedian(np.where(m[has], x[has], np.nan), axis=1)
    return m & (x > med), m & (x < med)  # a NaN median (empty row) compares False


def _zscore(S: ArrayLike, mask: Mask | None, axis: int) -> Scores:
    x = _as_matrix(S)
    m = _check_mask(mask, x.shape)
    if m is None:
        mean = x.mean(axis=axis, keepdims=True, dtype=np.float64)
        std = x.std(axis=axis, keepdims=True, dtype=np.float64)
    else:
        x = np.where(m, x, 0.0)  # non-candidate values never enter a statistic
        count = np.maximum(m.sum(axis=axis, keepdims=True), 1)
        mean = x.sum(axis=axis, keepdims=True, dtype=np.float64) / count
        dev = np.where(m, x - mean, 0.0)
        std = np.sqrt((dev * dev).sum(axis=axis, keepdims=True) / count)
    spread = std > ZSCORE_EPS
    z = np.where(spread, (x - mean) / np.where(spread, std, 1.0), 0.0)
    if m is not None:
        z = np.where(m, z, 0.0)
    return z.astype(np.float32)


def _average_ranks(key: NDArray[np.floating[Any]]) -> NDArray[np.float64]:
    """1-based ranks of each row's keys, ascending, tied keys sharing their mean rank.

    The numbers of ``scipy.stats.rankdata(key, "average", axis=1)`` (``key`` has no NaN),
    from an unstable sort: the order within a tie does not change its mean, so the quicksort
    serves where ``rankdata`` pays for a stable sort (3x slower on 300 x 5,183 without ties,
    1.4x with many). Each tie's shared rank comes from the group's first and last positions,
    found once over the flattened rows (2.5 against 1.7 ms on 65 x 1,000 with many ties, where
    running maxima and minima along each row were used before).
    """
    n, m = key.shape
    order = np.argsort(key, axis=1)
    ordered = np.take_along_axis(key, order, axis=1)
    tied = ordered[:, 1:] == ordered[:, :-1]  # with the next position in sorted order
    ranked: NDArray[np.float64]
    if tied.any():
        # Groups of equal keys, numbered over the flattened rows (a row's first position
        # always starts one): each runs from its start to the next group's start, and its
        # positions share the mean of the first and last (1-based; exact, integers and halves).
        starts_group = np.ones((n, m), dtype=np.bool_)
        np.logical_not(tied, out=starts_group[:, 1:])
        flat = starts_group.ravel()
        first = np.flatnonzero(flat)
        last = np.append(first[1:], flat.size) - 1
        mean_rank = (first % m + last % m) / 2.0 + 1.0
        ranked = mean_rank[np.cumsum(flat) - 1].reshape(n, m)
    else:
        ranked = np.broadcast_to(np.arange(1.0, m + 1.0), (n, m))
    out = np.empty((n, m), dtype=np.float64)
    np.put_along_axis(out, order, ranked, axis=1)
    return out


def _sort_key(x: NDArray[np.floating[Any]]) -> NDArray[np.floating[Any]]:
    """Ascending sort key of the ranking order: ``-score``, NaN mapped to ``+inf`` (last)."""
    key: NDArray[np.floating[Any]] = np.nan_to_num(-x, nan=np.inf, posinf=np.inf, neginf=-np.inf)
    return key


def _first_k(key: NDArray[np.floating[Any]], k: int) -> NDArray[np.intp]:
    """Positions of the ``k`` smallest keys, ascending, ties by position (no NaN in ``key``)."""
    n = key.shape[0]
    if k >= n:
        return np.argsort(key, kind="stable")
    if k == 0:
        return np.empty(0, dtype=np.intp)
    # O(n) partition, then a stable sort of the (few) keys at or below the k-th one, so that
    # ties at the cut are resolved by position exactly as a full stable sort would.
    kth = np.partition(key, k - 1)[k - 1]
    pool = np.flatnonzero(key <= kth)
    return pool[np.argsort(key[pool], kind="stable")[:k]]


def _as_matrix(S: ArrayLike) -> NDArray[np.floating[Any]]:
    # float32 stays float32 (ordering is exact, memory is halved); other dtypes go to float64.
    x = np.asarray(S)
    if x.dtype not in (np.float32, np.float64):
        x = x.astype(np.float64)
    if x.ndim != 2:
        raise ValueError(f"expected a 2-D score matrix, got shape {x.shape}")
    return x


def _as_row(row: ArrayLike) -> NDArray[np.float64]:
    x = np.asarray(row, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"expected a 1-D score row, got shape {x.shape}")
    return x


def _check_mask(mask: Mask | None, shape: tuple[int, ...]) -> Mask | None:
    if mask is None:
        return None
    m = np.asarray(mask)
    if m.dtype != np.bool_:
        raise ValueError(f"mask must be boolean, got dtype {m.dtype}")
    if m.shape != shape:
        raise ValueError(f"mask shape {m.shape} does not match scores {shape}")
    return m


def _check_k(k: int) -> int:
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    return int(k)


def _check_indices(idx: ArrayLike, n: int, name: str) -> NDArray[np.intp]:
    a = np.asarray(idx)
    if a.size == 0:
        return np.empty(0, dtype=np.intp)
    if a.ndim != 1 or a.dtype.kind not in "iu":
        raise ValueError(f"{name} must be a 1-D integer array, got {a.dtype} {a.shape}")
    if a.min() < 0 or a.max() >= n:
        raise ValueError(f"{name} has an index outside [0, {n})")
    return a.astype(np.intp)
