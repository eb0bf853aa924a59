"""Pseudo-relevance feedback in embedding space: centroids, Rocchio, VPRF, SoftCentroid, Fisher.

All vectors live in the encoder's embedding space; scoring a document against an updated
query is a dot product with the (L2-normalised) document embeddings. "Normalise" means L2
normalisation throughout, and it maps a vector of norm at most :data:`NORM_EPS` (an empty set,
or contributions that cancel) to the zero vector rather than to NaN: a zero query scores every
document 0, which keeps a program finite, and a caller can test for it.

Functions that select documents from a score matrix follow the candidate mask convention of
``embedding_ttc.programs.primitives.scores``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from embedding_ttc.programs.primitives.scores import Mask, top_k_indices

Vectors = NDArray[np.float32]
"""A ``float32`` vector ``(d,)`` or matrix of row vectors ``(n, d)``."""

NORM_EPS: float = 1e-12
"""Vectors with an L2 norm at or below this normalise to the zero vector."""

SOFT_CENTROID_K: int = 3
"""Default number of top documents of *SoftCentroid* (paper App. D: ``K = 3``)."""

SOFT_CENTROID_TAU: float = 0.05
"""Default softmax temperature of *SoftCentroid* over cosine scores (paper App. D)."""

SOFT_CENTROID_ALPHA: float = 0.5
"""Default interpolation weight of the centroid in *SoftCentroid* (paper App. D)."""

FISHER_SHRINKAGE: float = 1.0
"""Ridge of :func:`fisher_lda_direction`, as a multiple of the mean within-class variance.

The regularised scatter is ``S_w + lam * I`` with ``lam = FISHER_SHRINKAGE * trace(S_w) / d``.
With a few dozen documents in ``d`` = 384 to 1024 dimensions ``S_w`` is singular, so some
ridge is required; at 1.0 a direction with no observed within-class spread is treated as one
of average spread. As the shrinkage grows the direction tends to :func:`fisher_direction`.
"""


def centroid(X: ArrayLike, rows: ArrayLike) -> Vectors:
    """The normalised mean of some rows of ``X``.

    Args:
        X: ``(n, d)`` embeddings.
        rows: integer row indices, or a boolean ``(n,)`` mask of rows.

    Returns:
        A new unit ``float32`` vector ``(d,)``; the zero vector when ``rows`` is empty or the
        mean has (near) zero norm.

    """
    x = _as_matrix(X, "X")
    idx = _rows(rows, x.shape[0])
    if idx.size == 0:
        return np.zeros(x.shape[1], dtype=np.float32)
    return _normalize(x[idx].mean(axis=0, dtype=np.float64))


def rocchio(
    q: ArrayLike,
    pos_centroid: ArrayLike,
    neg_centroid: ArrayLike | None = None,
    *,
    alpha: float = 1.0,
    beta: float = 1.0,
    gamma: float = 1.0,
) -> Vectors:
    """Rocchio's update ``q' = normalize(alpha q + beta pos - gamma neg)``.

    Rocchio (1971), "Relevance feedback in information retrieval", in dense embedding space.
    The defaults give the paper's *CrossRoundRRF* round 2 (App. A.6):
    ``normalize(q + d_pos - d_neg)``.

    Args:
        q: a query ``(d,)`` or queries ``(n_q, d)``.
        pos_centroid: positive centroid(s), broadcastable to ``q``'s shape.
        neg_centroid: negative centroid(s), broadcastable to ``q``'s shape; ``None`` = none.
        alpha: weight of the query.
        beta: weight of the positive centroid.
        gamma: weight of the negative centroid.

    Returns:
        New unit ``float32`` vector(s) of ``q``'s shape (zero where the sum vanishes).

    Raises:
        ValueError: if a centroid does not broadcast to ``q``'s shape.

    """
    qq = np.asarray(q, dtype=np.float64)
    combo = alpha * qq + beta * _broadcast(pos_centroid, qq.shape, "pos_centroid")
    if neg_centroid is not None:
        combo = combo - gamma * _broadcast(neg_centroid, qq.shape, "neg_centroid")
    return _normalize(combo)


def vprf_update(
    Q: ArrayLike, D: ArrayLike, top_idx: Sequence[NDArray[np.intp]], beta: float
) -> Vectors:
    """Vector PRF with a uniform mean: ``q' = normalize((1 - beta) q + beta mean(D[top]))``.

    The VPRF "Average" update of Li et al. (2023), "Pseudo relevance feedback with deep
    language models and dense retrievers", as the paper's App. D grids it: "the uniform mean
    of the top-K documents interpolated with the query with weight beta" (beta in
    {0.1, 0.3, 0.5, 0.7}). The mean is the plain (unnormalised) mean of the document
    embeddings, and ``beta`` weighs it against ``1 - beta`` for the query; the paper calls
    this classical Rocchio without a negative term.

    Args:
        Q: ``(n_q, d)`` query embeddings.
        D: ``(n_d, d)`` document embeddings.
        top_idx: per query, the feedback documents' column indices (e.g. from
            ``scores.top_k_indices`` under the candidate mask). An empty array leaves the
            query's direction unchanged.
        beta: feedback weight in ``[0, 1]``.

    Returns:
        A new ``float32`` ``(n_q, d)`` matrix of unit queries.

    Raises:
        ValueError: on mismatched shapes or ``beta`` outside ``[0, 1]``.

    """
    q = _as_matrix(Q, "Q").astype(np.float64)
    d = _as_matrix(D, "D", width=q.shape[1])
    _check_unit_interval(beta, "beta")
    if len(top_idx) != q.shape[0]:
        raise ValueError(f"expected {q.shape[0]} index arrays, got {len(top_idx)}")
    means = np.zeros_like(q)
    for i, idx in enumerate(top_idx):
        rows = _rows(idx, d.shape[0])
        if rows.size:
            means[i] = d[rows].mean(axis=0, dtype=np.float64)
    return _normalize((1.0 - beta) * q + beta * means)


def softmax_centroid(
    Q: ArrayLike,
    D: ArrayLike,
    S: ArrayLike,
    k: int,
    tau: float,
    mask: Mask | None = None,
) -> Vectors:
    """Per query, the normalised softmax(S / tau)-weighted centroid of its top-k candidates.

    ``c_i = normalize(sum_{j in top_k(i)} w_ij d_j)`` with
    ``w_ij = exp(S_ij / tau) / sum_{l in top_k(i)} exp(S_il / tau)``; top-k is
    ``scores.top_k_indices`` (ties by column index). The centroid is normalised so that it is
    a point on the unit sphere like the query it replaces (see :func:`soft_centroid_query`).

    Args:
        Q: ``(n_q, d)`` query embeddings (used only to check shapes).
        D: ``(n_d, d)`` document embeddings.
        S: ``(n_q, n_d)`` scores selecting and weighting the feedback documents (finite at
            candidates).
        k: number of feedback documents, ``k >= 1``.
        tau: softmax temperature, ``tau > 0``.
        mask: candidate mask (``scores`` module docstring); ``None`` means all candidates.

    Returns:
        A new ``float32`` ``(n_q, d)`` matrix; a query without candidates gets a zero row.

    Raises:
        ValueError: on mismatched shapes, ``k < 1`` or ``tau <= 0``.

    """
    q = _as_matrix(Q, "Q")
    d = _as_matrix(D, "D", width=q.shape[1])
    s = _as_matrix(S, "S")
    if s.shape != (q.shape[0], d.shape[0]):
        raise ValueError(f"S has shape {s.shape}, expected {(q.shape[0], d.shape[0])}")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if not tau > 0:
        raise ValueError(f"tau must be > 0, got {tau}")
    out = np.zeros(q.shape, dtype=np.float64)
    for i, idx in enumerate(top_k_indices(s, k, mask)):
        if idx.size == 0:
            continue
        logits = s[i, idx].astype(np.float64) / tau
        weights = np.exp(logits - logits.max())  # shifted: exp never overflows
        out[i] = (weights / weights.sum()) @ d[idx].astype(np.float64)
    return _normalize(out)


def soft_centroid_query(
    Q: ArrayLike,
    D: ArrayLike,
    S: ArrayLike,
    *,
    k: int = SOFT_CENTROID_K,
    tau: float = SOFT_CENTROID_TAU,
    alpha: float = SOFT_CENTROID_ALPHA,
    mask: Mask | None = None,
) -> Vectors:
    """*SoftCentroid*'s query: ``q' = normalize((1 - alpha) q + alpha c)``.

    The paper (§4.4 and App. D) calls SoftCentroid "a minimal centroid-replacement program that
    isolates the PRF mechanism" with defaults ``K = 3, alpha = 0.5, tau = 0.05``. Our reading
    of "centroid replacement": the query is moved toward, and at ``alpha = 1`` replaced by,
    the unit softmax-weighted centroid ``c`` of :func:`softmax_centroid` of its top-K
    documents; at ``alpha = 0.5`` the query and the centroid (both unit vectors) count
    equally, so ``q'`` bisects them on the sphere. It differs from :func:`vprf_update` only in
    the softmax weights and in normalising the centroid before interpolating.

    Args:
        Q: ``(n_q, d)`` L2-normalised query embeddings.
        D: ``(n_d, d)`` L2-normalised document embeddings.
        S: ``(n_q, n_d)`` scores (normally the cosines ``Q Dᵀ``).
        k: number of feedback documents, ``k >= 1``.
        tau: softmax temperature, ``tau > 0``.
        alpha: centroid weight in ``[0, 1]``.
        mask: candidate mask (``scores`` module docstring); ``None`` means all candidates.

    Returns:
        A new ``float32`` ``(n_q, d)`` matrix of unit queries (a query without candidates
        keeps its own direction).

    Raises:
        ValueError: on mismatched shapes or out-of-range parameters.

    """
    _check_unit_interval(alpha, "alpha")
    c = softmax_centroid(Q, D, S, k, tau, mask).astype(np.float64)
    q = _as_matrix(Q, "Q").astype(np.float64)
    return _normalize((1.0 - alpha) * q + alpha * c)


def query_residual(q: ArrayLike, direction: ArrayLike) -> Vectors:
    """The part of ``q`` orthogonal to ``direction``: ``q - proj(q, direction)``, unnormalised.

    *CrossRoundRRF* round 3 (paper App. A.6): ``q_res = q - proj(q, d_pos)``, with a fallback
    to round 1 when ``||q_res|| < 0.1``; the norm is left to the caller for that test. A zero
    direction projects nothing away, so ``q`` comes back unchanged.

    Args:
        q: a query ``(d,)`` or queries ``(n_q, d)``.
        direction: direction(s) broadcastable to ``q``'s shape (need not be unit).

    Returns:
        New ``float32`` residual(s) of ``q``'s shape.

    Raises:
        ValueError: if ``direction`` does not broadcast to ``q``'s shape.

    """
    qq = np.asarray(q, dtype=np.float64)
    unit = _normalize(_broadcast(direction, qq.shape, "direction")).astype(np.float64)
    coef = (qq * unit).sum(axis=-1, keepdims=True)
    residual: Vectors = (qq - coef * unit).astype(np.float32)
    return residual


def fisher_direction(D: ArrayLike, top_rows: ArrayLike, bottom_rows: ArrayLike) -> Vectors:
    """The paper's Fisher direction ``normalize(mean(D[top]) - mean(D[bottom]))``.

    *FisherStability* (paper App. A.12) scores documents by ``d_i · w`` with this ``w``, the
    direction separating top-quarter from bottom-quarter documents. It is Fisher's (1936)
    linear discriminant without the within-class scatter (equivalently, with an isotropic
    one); :func:`fisher_lda_direction` keeps the scatter.

    Args:
        D: ``(n_d, d)`` document embeddings.
        top_rows: row indices (or a boolean mask) of the positive class.
        bottom_rows: row indices (or a boolean mask) of the negative class.

    Returns:
        A new unit ``float32`` vector ``(d,)``; zero when either class is empty or the means
        coincide.

    """
    x = _as_matrix(D, "D")
    top, bot = _rows(top_rows, x.shape[0]), _rows(bottom_rows, x.shape[0])
    if top.size == 0 or bot.size == 0:
        return np.zeros(x.shape[1], dtype=np.float32)
    return _normalize(x[top].mean(axis=0, dtype=np.float64) - x[bot].mean(axis=0, dtype=np.float64))


def fisher_lda_direction(
    D: ArrayLike,
    top_rows: ArrayLike,
    bottom_rows: ArrayLike,
    *,
    shrinkage: float = FISHER_SHRINKAGE,
) -> Vectors:
    """Fisher's (1936) discriminant ``normalize((S_w + lam I)^-1 (mu_top - mu_bottom))``.

    ``S_w`` is the pooled within-class covariance, ``(sum over both classes of
    (x - mu_class)(x - mu_class)ᵀ) / max(n_top + n_bottom - 2, 1)``, and
    ``lam = shrinkage * trace(S_w) / d`` (see :data:`FISHER_SHRINKAGE`); when ``S_w`` is zero
    (one document per class) ``lam = 1``, which gives :func:`fisher_direction`. The system is
    solved with ``numpy.linalg.solve`` in float64.

    Args:
        D: ``(n_d, d)`` document embeddings.
        top_rows: row indices (or a boolean mask) of the positive class.
        bottom_rows: row indices (or a boolean mask) of the negative class.
        shrinkage: ridge as a multiple of the mean within-class variance, ``> 0``.

    Returns:
        A new unit ``float32`` vector ``(d,)``; zero when either class is empty or the means
        coincide.

    Raises:
        ValueError: if ``shrinkage <= 0``.

    """
    if not shrinkage > 0:
        raise ValueError(f"shrinkage must be > 0, got {shrinkage}")
    x = _as_matrix(D, "D")
    top, bot = _rows(top_rows, x.shape[0]), _rows(bottom_rows, x.shape[0])
    if top.size == 0 or bot.size == 0:
        return np.zeros(x.shape[1], dtype=np.float32)
    xt, xb = x[top].astype(np.float64), x[bot].astype(np.float64)
    mt, mb = xt.mean(axis=0), xb.mean(axis=0)
    ct, cb = xt - mt, xb - mb
    scatter = (ct.T @ ct + cb.T @ cb) / max(top.size + bot.size - 2, 1)
    mean_var = float(np.trace(scatter)) / x.shape[1]
    lam = shrinkage * mean_var if mean_var > 0 else 1.0
    w = np.linalg.solve(scatter + lam * np.eye(x.shape[1]), mt - mb)
    return _normalize(w)


def rank_stability(channel_ranks: Sequence[ArrayLike]) -> NDArray[np.float32]:
    """Rank stability ``1 / (1 + var_c(rank_c))`` of each document across channels.

    *FisherStability* (paper App. A.12): "the variance of each document's rank across all
    preceding scoring channels; low variance indicates robust consensus". The population
    variance over channels is turned into a score where higher means more stable with
    ``1 / (1 + var)``: it lies in ``(0, 1]``, is 1 for a document ranked identically by every
    channel, and keeps 0 (the non-candidate value) below every candidate. Only its order
    matters when it is fused by RRF.

    Args:
        channel_ranks: one or more ``(n_q, n_d)`` rank matrices as returned by
            ``scores.ranks`` (``+inf`` at non-candidates).

    Returns:
        A new ``float32`` ``(n_q, n_d)`` matrix; 0 wherever any channel's rank is not finite.

    Raises:
        ValueError: if ``channel_ranks`` is empty or the shapes differ.

    """
    if len(channel_ranks) == 0:
        raise ValueError("rank_stability needs at least one channel")
    mats = [np.asarray(r, dtype=np.float64) for r in channel_ranks]
    shape = mats[0].shape
    if len(shape) != 2 or any(r.shape != shape for r in mats):
        raise ValueError(f"rank channels must share one 2-D shape: {[r.shape for r in mats]}")
    finite = np.ones(shape, dtype=np.bool_)
    total = np.zeros(shape)
    for r in mats:
        finite &= np.isfinite(r)
        total += np.where(np.isfinite(r), r, 0.0)
    mean = total / len(mats)
    # Two passes (mean, then squared deviations) avoid the cancellation of E[r^2] - E[r]^2
    # at ranks in the hundreds of thousands.
    sq = np.zeros(shape)
    for r in mats:
        dev = np.where(finite, r - mean, 0.0)
        sq += dev * dev
    return np.where(finite, 1.0 / (1.0 + sq / len(mats)), 0.0).astype(np.float32)


def _normalize(v: NDArray[np.float64]) -> Vectors:
    """L2-normalise the last axis; norms at or below :data:`NORM_EPS` give zero vectors."""
    norm = np.linalg.norm(v, axis=-1, keepdims=True)
    ok = norm > NORM_EPS
    return np.where(ok, v / np.where(ok, norm, 1.0), 0.0).astype(np.float32)


def _as_matrix(X: ArrayLike, name: str, width: int | None = None) -> NDArray[np.floating[Any]]:
    # Not converted as a whole (a corpus can be large, and per-query callers pass it each
    # time): float32 stays float32, and only the selected rows are cast to float64.
    x = np.asarray(X)
    if x.dtype not in (np.float32, np.float64):
        x = x.astype(np.float64)
    if x.ndim != 2 or (width is not None and x.shape[1] != width):
        want = "(n, d)" if width is None else f"(n, {width})"
        raise ValueError(f"{name} must have shape {want}, got {x.shape}")
    return x


def _rows(rows: ArrayLike, n: int) -> NDArray[np.intp]:
    """Row indices from an index array or a boolean row mask, checked against ``n``."""
    a = np.asarray(rows)
    if a.dtype == np.bool_:
        if a.shape != (n,):
            raise ValueError(f"a boolean row mask must have shape ({n},), got {a.shape}")
        return np.flatnonzero(a)
    if a.size == 0:
        return np.empty(0, dtype=np.intp)
    if a.ndim != 1 or a.dtype.kind not in "iu" or a.min() < 0 or a.max() >= n:
        raise ValueError(f"rows must be 1-D integer indices in [0, {n})")
    return a.astype(np.intp)


def _broadcast(v: ArrayLike, shape: tuple[int, ...], name: str) -> NDArray[np.float64]:
    a = np.asarray(v, dtype=np.float64)
    try:
        if np.broadcast_shapes(a.shape, shape) == shape:
            return a
    except ValueError:
        pass
    raise ValueError(f"{name} of shape {a.shape} does not broadcast to {shape}")


def _check_unit_interval(value: float, name: str) -> None:
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1], got {value}")
