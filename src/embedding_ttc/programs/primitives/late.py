"""Late-interaction aggregation of query-to-chunk similarities into document scores.

A document is split into chunks (sentences, sentence pairs, paragraphs; see ``chunking``),
the chunks are encoded, and each query is compared with every chunk. The two aggregations
here turn the query-by-chunk cosines into query-by-document scores:

* :func:`maxsim`, ColBERT's MaxSim (Khattab & Zaharia 2020) at chunk rather than token
  granularity, the scorer of *SentMaxSim* and *AdaptGranularity* (paper App. A.2, A.3);
* :func:`topmeansim`, the mean similarity of a document's chunks above the per-query median,
  the second channel of *CoverageTriple* (App. A.4).

Chunks are given as ``C`` (``(n_chunks, d)``, L2-normalised rows) with ``owner[j]`` the
document index of chunk ``j``: non-decreasing, covering ``0 .. n_docs - 1``, every document
owning at least one chunk, so that each document's chunks form one contiguous segment and a
segment reduction (``np.ufunc.reduceat``) aggregates them.

Queries are processed in blocks so that at most about :data:`BLOCK_ELEMENTS` query-chunk
similarities exist at once; the full ``n_q x n_chunks`` matrix (16,000 x 150,000 float32 is
9.6 GB) is never materialised. Both functions follow the candidate mask convention of
``embedding_ttc.programs.primitives.scores``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from embedding_ttc.programs.primitives.scores import Mask, Scores

# The names the search prompt lists; maxsim_topmeansim, both at once for the library's channel
# sets, is left out (a generated program calls the two).
__all__ = ["BLOCK_ELEMENTS", "maxsim", "topmeansim"]

BLOCK_ELEMENTS: int = 1 << 24
"""Budget of query-chunk similarities held at once (16.8 M float32 = 64 MiB per block).

The query block has ``max(1, BLOCK_ELEMENTS // n_chunks)`` rows; with 150,000 chunks that is
111 queries per block. Temporaries of the same size (a boolean mask, a masked copy) raise the
peak to a small multiple of the block, still well under a gigabyte.
"""


def maxsim(
    Q: ArrayLike,
    C: ArrayLike,
    owner: ArrayLike,
    n_docs: int,
    *,
    mask: Mask | None = None,
    block_elements: int = BLOCK_ELEMENTS,
) -> Scores:
    """Chunk-level MaxSim: each document's best cosine with the query over its chunks.

    ``out[i, j] = max_{c : owner[c] = j} q_i · C_c`` (Khattab & Zaharia 2020, ColBERT; paper
    App. A.2). MaxSim has no per-query statistic, so the mask only zeroes non-candidates.

    Args:
        Q: ``(n_q, d)`` L2-normalised query embeddings.
        C: ``(n_chunks, d)`` L2-normalised chunk embeddings.
        owner: ``(n_chunks,)`` document index of each chunk, non-decreasing, every document
            in ``0 .. n_docs - 1`` owning at least one chunk.
        n_docs: number of documents.
        mask: candidate mask (``scores`` module docstring); ``None`` means all candidates.
        block_elements: similarity budget per query block (see :data:`BLOCK_ELEMENTS`).

    Returns:
        A new ``float32`` ``(n_q, n_docs)`` matrix, 0 at non-candidates.

    Raises:
        ValueError: on mismatched shapes or an ``owner`` that does not satisfy the layout.

    """
    q, c, starts, m = _prepare(Q, C, owner, n_docs, mask, block_elements)
    out = np.zeros((q.shape[0], n_docs), dtype=np.float32)
    if n_docs == 0:
        return out
    for lo, hi in _blocks(q.shape[0], c.shape[0], block_elements):
        out[lo:hi] = np.maximum.reduceat(q[lo:hi] @ c.T, starts, axis=1)
    if m is not None:
        out[~m] = 0.0
    return out


def topmeansim(
    Q: ArrayLike,
    C: ArrayLike,
    owner: ArrayLike,
    n_docs: int,
    *,
    mask: Mask | None = None,
    block_elements: int = BLOCK_ELEMENTS,
) -> Scores:
    """Mean similarity of a document's chunks that lie above the per-query median.

    Our reading of the paper's App. A.4 ("TopMeanSim for the mean similarity of chunks above
    the per-query median"):

    1. for query ``i``, ``med_i`` is the median (``np.median``: the mean of the two middle
       values for an even count) of its similarities to *every chunk of every candidate
       document*, i.e. one threshold per query over the whole pool of chunks, not one per
       document;
    2. ``out[i, j]`` is the mean of ``q_i · C_c`` over document ``j``'s chunks with a
       similarity strictly above ``med_i``;
    3. a document none of whose chunks is above the median falls back to its MaxSim (its best
       chunk). That value is at or below the median while every other score is above it, so
       such documents rank below all documents with an above-median chunk, ordered among
       themselves by their best chunk.

    Args:
        Q: ``(n_q, d)`` L2-normalised query embeddings.
        C: ``(n_chunks, d)`` L2-normalised chunk embeddings.
        owner: ``(n_chunks,)`` document index of each chunk (layout as in :func:`maxsim`).
        n_docs: number of documents.
        mask: candidate mask (``scores`` module docstring); the median is taken over the
            chunks of the query's candidates only. ``None`` means all candidates.
        block_elements: similarity budget per query block (see :data:`BLOCK_ELEMENTS`).

    Returns:
        A new ``float32`` ``(n_q, n_docs)`` matrix, 0 at non-candidates.

    Raises:
        ValueError: on mismatched shapes or an ``owner`` that does not satisfy the layout.

    """
    return maxsim_topmeansim(Q, C, owner, n_docs, mask=mask, block_elements=block_elements)[1]


def maxsim_topmeansim(
    Q: ArrayLike,
    C: ArrayLike,
    owner: ArrayLike,
    n_docs: int,
    *,
    mask: Mask | None = None,
    block_elements: int = BLOCK_ELEMENTS,
) -> tuple[Scores, Scores]:
    """:func:`maxsim` and :func:`topmeansim` of the same chunks, each similarity computed once.

    The same blocks and the same products as the two functions called apart, so the same
    values bit for bit; for a caller that wants both (CoverageTriple's channels), one query by
    chunk product per block instead of two.

    Returns:
        ``(maxsim, topmeansim)``, each a new ``float32`` ``(n_q, n_docs)`` matrix.

    """
    q, c, starts, m = _prepare(Q, C, owner, n_docs, mask, block_elements)
    best_out = np.zeros((q.shape[0], n_docs), dtype=np.float32)
    out = np.zeros((q.shape[0], n_docs), dtype=np.float32)
    if n_docs == 0:
        return best_out, out
    own = np.asarray(owner, dtype=np.intp)
    for lo, hi in _blocks(q.shape[0], c.shape[0], block_elements):
        sims = q[lo:hi] @ c.T
        above = None if m is None else _above_candidate_median(sims, m[lo:hi][:, own])
        best_out[lo:hi], out[lo:hi] = _reduce(sims, starts, above)
    if m is not None:
        best_out[~m] = 0.0
        out[~m] = 0.0
    return best_out, out


def _above_candidate_median(sims: NDArray[np.float32], chunk_mask: Mask) -> Mask:
    """Chunks of candidate documents strictly above the median over those chunks, per row."""
    med = np.full((sims.shape[0], 1), np.inf, dtype=np.float64)  # no candidate: none above
    has = chunk_mask.any(axis=1)
    if has.any():
        med[has, 0] = np.nanmedian(np.where(chunk_mask[has], sims[has], np.nan), axis=1)
    return chunk_mask & (sims > med)


def _prepare(
    Q: ArrayLike,
    C: ArrayLike,
    owner: ArrayLike,
    n_docs: int,
    mask: Mask | None,
    block_elements: int,
) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.intp], Mask | None]:
    """Validate the inputs; return float32 views of ``Q`` and ``C``, segment starts and mask."""
    q = np.asarray(Q, dtype=np.float32)
    c = np.asarray(C, dtype=np.float32)
    if q.ndim != 2 or c.ndim != 2 or q.shape[1] != c.shape[1]:
        raise ValueError(f"Q {q.shape} and C {c.shape} must be 2-D with the same width")
    if block_elements < 1:
        raise ValueError(f"block_elements must be >= 1, got {block_elements}")
    starts = _segment_starts(owner, n_docs, c.shape[0])
    m: Mask | None = None
    if mask is not None:
        m = np.asarray(mask)
        if m.dtype != np.bool_ or m.shape != (q.shape[0], n_docs):
            raise ValueError(f"mask must be boolean of shape {(q.shape[0], n_docs)}")
    return q, c, starts, m


def maxsim_topmeansim_of(sims: ArrayLike, owner: ArrayLike, n_docs: int) -> tuple[Scores, Scores]:
    """:func:`maxsim_topmeansim` of query-chunk similarities computed by the caller.

    For a caller that takes the similarities otherwise than as ``Q @ C.T`` (the cosines about a
    centroid of :class:`~embedding_ttc.programs.library.coverage_channels.Centred`); every
    document is a candidate. The reduction is :func:`maxsim_topmeansim`'s.

    Args:
        sims: ``(n_q, n_chunks)`` similarities.
        owner: ``(n_chunks,)`` document index of each chunk (layout as in :func:`maxsim`).
        n_docs: number of documents.

    Returns:
        ``(maxsim, topmeansim)``, each a new ``float32`` ``(n_q, n_docs)`` matrix.

    Raises:
        ValueError: on a ``sims`` that is not 2-D or an ``owner`` that does not fit it.

    """
    s = np.asarray(sims, dtype=np.float32)
    if s.ndim != 2:
        raise ValueError(f"sims must be 2-D, got shape {s.shape}")
    starts = _segment_starts(owner, n_docs, s.shape[1])
    if n_docs == 0:
        return (np.zeros((s.shape[0], 0), dtype=np.float32),) * 2
    best, top = _reduce(s, starts, None)
    return best.astype(np.float32, copy=False), top.astype(np.float32)


def _reduce(
    sims: NDArray[np.float32], starts: NDArray[np.intp], above: Mask | None
) -> tuple[NDArray[np.float32], NDArray[np.float64]]:
    """Per document, the best similarity and the mean of those above the row's median.

    ``above`` marks the chunks above the median when the caller took it over candidates only;
    ``None`` takes it over every chunk of the row.
    """
    if above is None:
        above = sims > _row_median(sims)
    total = np.add.reduceat(_kept(sims, above), starts, axis=1, dtype=np.float64)
    count = np.add.reduceat(above, starts, axis=1, dtype=np.int64)
    best = np.maximum.reduceat(sims, starts, axis=1)
    return best, np.where(count > 0, total / np.maximum(count, 1), best)


def _row_median(x: NDArray[np.floating]) -> NDArray[np.floating]:
    """``np.median(x, axis=1, keepdims=True)``, bit for bit, from one partition instead of three.

    ``np.median`` partitions at both middle positions and at the last (to find a NaN), and a
    partition at several positions does not take numpy's vectorised path: 5.2 ms against
    0.4 ms on 65 rows of 9,000. One partition at ``n // 2`` puts the upper middle value
    there and only values at or below it before it, whose maximum is the lower middle value;
    their mean is taken as ``np.mean`` takes it (the sum from 0, then divided by 2, in ``x``'s
    dtype). A row holding a NaN has a NaN median, as with ``np.median``.
    """
    n = x.shape[1]
    if n == 0:
        empty: NDArray[np.floating] = np.median(x, axis=1, keepdims=True)
        return empty
    mid = n // 2
    part = np.partition(x, mid, axis=1)
    zero = x.dtype.type(0)  # np.mean's sum starts from 0, which makes a -0.0 middle 0.0
    upper = part[:, mid : mid + 1]
    median: NDArray[np.floating]
    if n % 2:
        median = zero + upper
    else:
        lower = part[:, :mid].max(axis=1, keepdims=True)
        median = (zero + lower + upper) / x.dtype.type(2)
    nan = np.isnan(x).any(axis=1)
    if nan.any():
        median[nan] = np.nan
    return median


def _kept(sims: NDArray[np.floating], above: Mask) -> NDArray[np.floating]:
    """``np.where(above, sims, 0.0)``, bit for bit, as a bitwise and.

    Each value's bits are kept where ``above`` and cleared (``+0.0``) elsewhere, NaN, infinite
    and ``-0.0`` values included; the select by mask costs 2.2 ms on 65 rows of 9,000, the and
    0.1 ms.
    """
    x = np.ascontiguousarray(sims)
    bits = np.dtype(f"u{x.dtype.itemsize}")
    keep = above.astype(bits)
    np.negative(keep, out=keep)  # 1 -> all ones, 0 -> 0
    np.bitwise_and(keep, x.view(bits), out=keep)
    kept: NDArray[np.floating] = keep.view(x.dtype)
    return kept


def _segment_starts(owner: ArrayLike, n_docs: int, n_chunks: int) -> NDArray[np.intp]:
    """First chunk of each document, checking the contiguous-segment layout of ``owner``."""
    own = np.asarray(owner)
    if own.shape != (n_chunks,) or (n_chunks > 0 and own.dtype.kind not in "iu"):
        raise ValueError(f"owner must be an integer array of shape ({n_chunks},)")
    if n_docs == 0:
        if n_chunks:
            raise ValueError("chunks given for an empty corpus")
        return np.empty(0, dtype=np.intp)
    steps = np.diff(own)
    if n_chunks == 0 or own[0] != 0 or own[-1] != n_docs - 1 or np.any((steps != 0) & (steps != 1)):
        raise ValueError(
            "owner must be non-decreasing from 0 to n_docs - 1 with every document owning a chunk"
        )
    return np.flatnonzero(np.concatenate(([True], steps != 0))).astype(np.intp)


def _blocks(n_q: int, n_chunks: int, block_elements: int) -> list[tuple[int, int]]:
    """Query row ranges holding at most ``block_elements`` similarities (at least one row)."""
    rows = max(1, block_elements // max(n_chunks, 1))
    return [(lo, min(lo + rows, n_q)) for lo in range(0, n_q, rows)]
