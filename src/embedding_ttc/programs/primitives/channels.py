"""Ready-made score channels: one call from the context to an ``(n_q, n_d)`` matrix.

The other primitive modules are the algebra (z-scores, MaxSim, Rocchio, BM25); a program
that uses them has to chunk, encode under the right view inside ``ctx.index_time()``, keep
chunk owners aligned and pass candidate masks itself. The functions here do that plumbing
once, so that a program reads as *which evidence, fused how*:

* :func:`view_scores` — documents re-encoded under another view (index-time work);
* :func:`query_view_scores` — queries re-encoded under another view (query-time work);
* :func:`chunk_scores` — documents split into sentences, sentence pairs or paragraphs, the
  pieces encoded once (index-time), each document scored by its best piece or by the mean of
  its pieces above the median (ColBERT's MaxSim at sentence granularity, App. A.2/A.3);
* :func:`bm25_scores` — Okapi BM25 through :class:`~.lexical.BM25` (``bm25s``);
* :func:`prf_scores` — the SoftCentroid query (App. E) rescored against the documents;
* :func:`prefix_scores` — cosine over a Matryoshka prefix of the dimensions;
* :func:`fuse` — a weighted sum of per-query z-scored channels, or reciprocal rank fusion.

Every function returns a new ``float32`` matrix with one row per query and one column per
document; with a candidate ``mask`` its statistics are taken over each query's candidates.
They are deterministic, and each text is encoded once per call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.programs.primitives.chunking import (
    chunk_documents,
    sentence_pairs,
    split_paragraphs,
    split_sentences,
)
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.late import maxsim, topmeansim
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import Mask, rrf, zscore_rows

__all__ = [
    "bm25_scores",
    "chunk_scores",
    "fuse",
    "prefix_scores",
    "prf_scores",
    "query_view_scores",
    "view_scores",
]

Scores = NDArray[np.float32]

CHUNK_UNITS: dict[str, Callable[[str], Sequence[str]]] = {
    "sentence": split_sentences,
    "sentence_pair": lambda text: sentence_pairs(split_sentences(text)),
    "paragraph": split_paragraphs,
}
"""The units :func:`chunk_scores` splits documents into."""

CHUNK_REDUCERS = ("max", "topmean")
"""How :func:`chunk_scores` turns piece similarities into a document score."""

MAX_PIECES_PER_DOC = 16
"""Pieces kept per document (the first ones), bounding the cost on book-length documents."""

FUSIONS = ("zscore", "rrf")
"""The fusion methods of :func:`fuse`."""


def view_scores(Q: Any, ctx: Any, view: str = "text-matching") -> Scores:
    """Queries against the documents re-encoded under ``view`` (an index-time encode).

    Args:
        Q: ``(n_q, d)`` query embeddings.
        ctx: the program's context.
        view: the documents' view (``"retrieval.query"``, ``"text-matching"``, ...).

    """
    with ctx.index_time():
        docs = ctx.encode_fn(list(ctx.doc_texts), view, None, None)
    return _matmul(Q, docs)


def query_view_scores(D: Any, ctx: Any, view: str = "text-matching") -> Scores:
    """The queries re-encoded under ``view`` (query-time encodes) against ``D``."""
    queries = ctx.encode_fn(list(ctx.query_texts), view, None, None)
    return _matmul(queries, D)


def chunk_scores(
    Q: Any,
    ctx: Any,
    unit: str = "sentence",
    reduce: str = "max",
    mask: Mask | None = None,
) -> Scores:
    """Documents scored by pieces (unit sentence|sentence_pair|paragraph; reduce max|topmean).

    The pieces (``unit``: ``sentence``, ``sentence_pair`` or ``paragraph``; at most
    :data:`MAX_PIECES_PER_DOC` per document) are encoded once under ``retrieval.passage``
    inside ``ctx.index_time()``. A document without boundaries is one piece.

    Raises:
        ValueError: on an unknown ``unit`` or ``reduce``.

    """
    if unit not in CHUNK_UNITS:
        raise ValueError(f"unknown unit {unit!r}; units: {', '.join(CHUNK_UNITS)}")
    if reduce not in CHUNK_REDUCERS:
        raise ValueError(f"unknown reduce {reduce!r}; reducers: {', '.join(CHUNK_REDUCERS)}")
    chunks = chunk_documents(
        ctx.doc_texts, CHUNK_UNITS[unit], max_chunks_per_doc=MAX_PIECES_PER_DOC
    )
    with ctx.index_time():
        pieces = ctx.encode_fn(list(chunks.texts), "retrieval.passage", None, None)
    score = maxsim if reduce == "max" else topmeansim
    return score(np.asarray(Q, dtype=np.float32), pieces, chunks.owner, chunks.n_docs, mask=mask)


def bm25_scores(ctx: Any) -> Scores:
    """Okapi BM25 of every document for every query (no encoder call)."""
    return BM25.fit(ctx.doc_texts).scores(ctx.query_texts)


def prf_scores(
    Q: Any,
    D: Any,
    S: Any,
    k: int = 3,
    alpha: float = 0.5,
    mask: Mask | None = None,
) -> Scores:
    """Feedback: each query moved toward its top ``k`` documents (SoftCentroid), rescored.

    ``q' = normalize((1 - alpha) q + alpha c)`` with ``c`` the softmax-weighted centroid of
    the query's ``k`` best candidates (no encoder call).
    """
    moved = soft_centroid_query(Q, D, S, k=k, alpha=alpha, mask=mask)
    return _matmul(moved, D)


def prefix_scores(Q: Any, D: Any, dims: int) -> Scores:
    """Cosine over the first ``dims`` dimensions, each row renormalised (Matryoshka prefix).

    Raises:
        ValueError: if ``dims`` is not positive.

    """
    if dims < 1:
        raise ValueError(f"dims must be >= 1, got {dims}")
    return _matmul(_unit(np.asarray(Q)[:, :dims]), _unit(np.asarray(D)[:, :dims]))


def fuse(
    channels: Sequence[Any],
    weights: Sequence[float] | None = None,
    mask: Mask | None = None,
    method: str = "zscore",
) -> Scores:
    """Fuse channels: weighted sum of row z-scores (method zscore) or rank fusion (rrf).

    ``zscore``: ``sum_i w_i * zscore_rows(channel_i)`` (each query's candidates standardised
    first, so channels on different scales mix); ``rrf``: reciprocal rank fusion of the
    channels' rankings (the weights are ignored).

    Raises:
        ValueError: on no channels, mismatched shapes or weights, or an unknown method.

    """
    if not channels:
        raise ValueError("fuse needs at least one channel")
    if method not in FUSIONS:
        raise ValueError(f"unknown method {method!r}; methods: {', '.join(FUSIONS)}")
    mats = [np.asarray(c, dtype=np.float32) for c in channels]
    shape = mats[0].shape
    if any(m.shape != shape for m in mats):
        raise ValueError(f"channels differ in shape: {[m.shape for m in mats]}")
    if method == "rrf":
        return np.asarray(rrf(mats, mask=mask), dtype=np.float32)
    w = [1.0] * len(mats) if weights is None else [float(x) for x in weights]
    if len(w) != len(mats):
        raise ValueError(f"{len(mats)} channels but {len(w)} weights")
    out = np.zeros(shape, dtype=np.float32)
    for weight, m in zip(w, mats, strict=True):
        out += np.float32(weight) * zscore_rows(m, mask)
    return out


def _matmul(A: Any, B: Any) -> Scores:
    return np.asarray(np.asarray(A, dtype=np.float32) @ np.asarray(B, dtype=np.float32).T)


def _unit(X: NDArray[Any]) -> NDArray[np.float32]:
    x = np.asarray(X, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    out: NDArray[np.float32] = (x / np.maximum(norms, np.float32(1e-12))).astype(np.float32)
    return out
