"""Paired bootstrap over queries: whether a program's ΔnDCG@10 on one task differs from 0.

The unit resampled is the query (Efron & Tibshirani 1993, the paired test of Sakai 2006 for IR
evaluation): with ``d_i`` = program nDCG@10 − P0 nDCG@10 on query ``i`` of a task's ``n``
queries, each of ``B`` resamples draws ``n`` queries with replacement and takes the mean of
their ``d``. From the ``B`` resampled means:

* the 95% confidence interval is their 2.5th and 97.5th percentiles (percentile method,
  linear interpolation between order statistics, NumPy's default);
* the two-sided p-value is ``min(1, 2 (1 + m) / (B + 1))``, where ``m`` counts resampled means
  on the other side of 0 from the observed mean (``<= 0`` when it is positive, ``>= 0`` when
  negative); the ``+1`` keeps p above 0 with finitely many resamples (Davison & Hinkley 1997).
  An observed mean of exactly 0 has p = 1;
* a significant win (loss) is a CI entirely above (below) 0.

A table tests many cells at once, so its significance is also reported after the
Benjamini–Hochberg correction (Benjamini & Hochberg 1995) over the cells of the table
(:func:`benjamini_hochberg`): a cell stays significant when it was significant and its
adjusted p-value is still at most ``1 − CONFIDENCE``, which bounds the expected share of
false discoveries among the significant cells at 5%.

Every cell gets its own random stream, seeded from (base seed, encoder, task, program) through
BLAKE2b (:func:`cell_seed`), so a cell's statistics do not depend on which other cells were
computed, in what order, or in which process; Python's ``hash`` is salted per process and
would not do.

The tables and figures summarise lists of Δ with :func:`median_or_nan`, :func:`mean_or_nan`
and :func:`win_rate`: nan for an empty list (no cell to summarise), which renders as "–".
"""

from __future__ import annotations

import hashlib
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from embedding_ttc.evaluation.comparison import WTL

DEFAULT_RESAMPLES = 10_000
CONFIDENCE = 0.95
ALPHA = 1 - CONFIDENCE
"""The significance level of the tests (5%)."""
CHUNK_ELEMENTS = 4_000_000  # resample indices drawn at once (32 MB of int64), bounds memory


def cell_seed(base_seed: int, encoder: str, task: str, program: str) -> int:
    """A 64-bit seed that depends only on its arguments (stable across processes and runs)."""
    h = hashlib.blake2b(digest_size=8)
    for part in (str(base_seed), encoder, task, program):
        h.update(part.encode("utf-8"))
        h.update(b"\0")
    return int.from_bytes(h.digest(), "little")


@dataclass(frozen=True)
class BootstrapResult:
    """The paired bootstrap of one cell.

    Attributes:
        mean: the observed mean of the per-query differences (not a resampled quantity).
        ci_low: lower end of the 95% percentile interval.
        ci_high: upper end of the 95% percentile interval.
        p_value: two-sided, with the +1 correction, capped at 1.
        resamples: number of resamples ``B``.
        seed: the seed of the random stream.

    """

    mean: float
    ci_low: float
    ci_high: float
    p_value: float
    resamples: int
    seed: int

    @property
    def significant_win(self) -> bool:
        """The CI lies entirely above 0."""
        return self.ci_low > 0.0

    @property
    def significant_loss(self) -> bool:
        """The CI lies entirely below 0."""
        return self.ci_high < 0.0


def resampled_means(differences: ArrayLike, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Means of ``resamples`` with-replacement resamples of ``differences`` (chunked)."""
    d = np.asarray(differences, dtype=np.float64)
    n = d.size
    out = np.empty(resamples, dtype=np.float64)
    chunk = max(1, CHUNK_ELEMENTS // max(n, 1))
    for start in range(0, resamples, chunk):
        stop = min(start + chunk, resamples)
        idx = rng.integers(0, n, size=(stop - start, n))
        out[start:stop] = d[idx].mean(axis=1)
    return out


def paired_bootstrap(
    differences: ArrayLike, *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> BootstrapResult:
    """Bootstrap the mean of per-query differences (program − baseline).

    Args:
        differences: one value per query.
        resamples: number of resamples ``B`` (positive).
        seed: seed of :func:`numpy.random.default_rng` (see :func:`cell_seed`).

    Raises:
        ValueError: on no queries, a non-finite difference or a non-positive ``resamples``.

    """
    d = np.asarray(differences, dtype=np.float64).ravel()
    if d.size == 0:
        raise ValueError("paired bootstrap needs at least one query")
    if not np.all(np.isfinite(d)):
        raise ValueError("paired bootstrap got a non-finite difference")
    if resamples < 1:
        raise ValueError(f"resamples must be positive, got {resamples}")
    means = resampled_means(d, resamples, np.random.default_rng(seed))
    observed = float(d.mean())
    alpha = (1.0 - CONFIDENCE) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    if observed > 0:
        other = int(np.count_nonzero(means <= 0.0))
    elif observed < 0:
        other = int(np.count_nonzero(means >= 0.0))
    else:
        other = resamples
    p_value = min(1.0, 2.0 * (1 + other) / (resamples + 1))
    # A CI of identical differences is exactly that value; quantile interpolation could
    # otherwise leave a rounding residue on either side of it.
    if np.all(d == d[0]):
        low = high = d[0]
    return BootstrapResult(
        mean=observed,
        ci_low=float(low),
        ci_high=float(high),
        p_value=p_value,
        resamples=resamples,
        seed=seed,
    )


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini–Hochberg adjusted p-values, in the order given (scipy's ``bh`` method).

    The adjusted value of the ``i``-th smallest of ``m`` p-values is
    ``min_{j >= i} m p_(j) / j``, capped at 1: the smallest false discovery rate at which that
    test would be declared significant.
    """
    if not p_values:
        return []
    from scipy.stats import false_discovery_control

    return [float(p) for p in false_discovery_control(np.asarray(p_values), method="bh")]


def median_or_nan(values: Sequence[float]) -> float:
    """The median of ``values``; nan when there are none."""
    return float(statistics.median(values)) if values else math.nan


def mean_or_nan(values: Sequence[float]) -> float:
    """The mean of ``values``; nan when there are none."""
    return float(statistics.fmean(values)) if values else math.nan


def win_rate(values: Sequence[float], threshold: float) -> float:
    """The share of ``values`` above ``threshold`` (wins); nan when there are none."""
    return WTL.count(values, threshold).wins / len(values) if values else math.nan
