"""Score channels: everything that turns the context and the encoder into an ``(n_q, n_d)`` matrix.

The other primitive modules are the algebra (z-scores, MaxSim, Rocchio, BM25); a program
that uses them has to chunk, encode under the right view inside ``ctx.index_time()``, keep
chunk owners aligned and pass candidate masks itself. This module does that plumbing once, so
that every program spends encoder calls and respects candidates in the same way:

* document-side encodes (chunks, documents under another view) run inside
  ``ctx.index_time()`` and are metered as amortisable index work (a deployed index stores
  them, :mod:`embedding_ttc.programs.recipe`);
* query-side encodes (expanded queries) are metered as per-query work;
* every ranking, statistic and anchor is taken over each query's candidates only.

Two layers. The building blocks the library's programs compose: the candidates of a call
(:func:`mask_for`, :func:`candidates_of`), chunk channels (:data:`SPLITTERS`,
:func:`encode_chunks`, :func:`maxsim_scores`, :func:`topmeansim_scores`, :func:`best_chunk`),
documents re-encoded (:func:`encode_documents`) and expanded queries (:func:`expand_queries`).
And the ready-made channels, one call from the context to a matrix, so that a program reads as
*which evidence, fused how*; they are this module's ``__all__``, the names the search prompt
lists for generated programs:

* :func:`view_scores` — documents re-encoded under another view (index-time work);
* :func:`query_view_scores` — queries re-encoded under another view (query-time work);
* :func:`chunk_scores` — documents split into sentences, sentence pairs or paragraphs, the
  pieces encoded once (index-time), each document scored by its best piece or by the mean of
  its pieces above the median (ColBERT's MaxSim at sentence granularity, App. A.2/A.3);
* :func:`bm25_scores` — Okapi BM25 through :class:`~.lexical.BM25` (``bm25s``);
* :func:`prf_scores` — the SoftCentroid query (App. E) rescored against the documents;
* :func:`prefix_scores` — cosine over a Matryoshka prefix of the dimensions;
* :func:`fuse` — a weighted sum of per-query z-scored channels, or reciprocal rank fusion.

Every channel function returns a new ``float32`` matrix with one row per query and one column
per document; with a candidate ``mask`` its statistics are taken over each query's candidates.
They are deterministic, and each text is encoded once per call.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.encoders.base import PASSAGE, QUERY
from embedding_ttc.programs.base import Context, DeployedInputs, Matrix

# ``scores`` by module for the names the search prompt lists under it (``candidate_mask``):
# the search's import repair takes a name this module holds to be found here, so it holds
# only its own names besides those it always imported.
from embedding_ttc.programs.primitives import scores
from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    chunk_documents,
    sentence_pairs,
    split_paragraphs,
    split_sentences,
)
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.late import maxsim, maxsim_topmeansim, topmeansim
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import Mask, Scores, rrf, zscore_rows
from embedding_ttc.programs.primitives.text_analysis import analyses_of

__all__ = [
    "bm25_scores",
    "chunk_scores",
    "fuse",
    "prefix_scores",
    "prf_scores",
    "query_view_scores",
    "view_scores",
]

# --- the candidates of a call --------------------------------------------------------------


def mask_for(ctx: Context, S: Matrix) -> Mask | None:
    """The candidate mask of this call (``None`` when every query ranks every document)."""
    return scores.candidate_mask(S.shape[0], S.shape[1], ctx.candidates)


def candidates_of(ctx: Context, row: int, n_docs: int) -> NDArray[np.intp]:
    """Column indices that query ``row`` ranks."""
    if ctx.candidates is None:
        return np.arange(n_docs, dtype=np.intp)
    return np.asarray(ctx.candidates[row], dtype=np.intp)


# --- chunk channels ------------------------------------------------------------------------


def _pairs(text: str) -> list[str]:
    return sentence_pairs(split_sentences(text))


SPLITTERS: dict[str, Callable[[str], Sequence[str]]] = {
    "sentence": split_sentences,
    "pair": _pairs,
    "paragraph": split_paragraphs,
}
"""The three granularities of CoverageTriple, finest first (the library's names for them)."""

CHUNK_UNITS: dict[str, Callable[[str], Sequence[str]]] = {
    "sentence": SPLITTERS["sentence"],
    "sentence_pair": SPLITTERS["pair"],
    "paragraph": SPLITTERS["paragraph"],
}
"""The units :func:`chunk_scores` splits documents into (the same splitters, named for it)."""

CHUNK_REDUCERS = ("max", "topmean")
"""How :func:`chunk_scores` turns piece similarities into a document score."""

MAX_PIECES_PER_DOC = 16
"""Pieces kept per document (the first ones), bounding the cost on book-length documents."""

FUSIONS = ("zscore", "rrf")
"""The fusion methods of :func:`fuse`."""


class ChunkLayout(Protocol):
    """Chunks of documents: each chunk's text and owning document (``chunking.Chunks``' shape)."""

    @property
    def texts(self) -> Sequence[str]:
        """The chunk texts, in document order."""
        ...

    @property
    def owner(self) -> NDArray[np.intp]:
        """The document of each chunk (non-decreasing, every document present)."""
        ...

    @property
    def n_docs(self) -> int:
        """The number of documents."""
        ...


@dataclass(frozen=True, eq=False)  # array fields have no boolean equality
class StoredChunks:
    """Chunks whose embeddings came by stored row: their texts are cut only if read.

    Scoring needs only the owners; a reader of the texts (:func:`best_chunk`) gets the chunks
    ``chunk_documents`` cuts from the same documents, which are those the rows were stored for.
    """

    owner: NDArray[np.intp]
    n_docs: int
    doc_texts: Sequence[str]
    granularity: str
    max_per_doc: int | None

    @functools.cached_property
    def texts(self) -> Sequence[str]:
        """The chunk texts, cut from the documents on first use."""
        cut = chunk_documents(
            self.doc_texts, SPLITTERS[self.granularity], max_chunks_per_doc=self.max_per_doc
        )
        if cut.owner.shape != self.owner.shape or not np.array_equal(cut.owner, self.owner):
            raise ValueError(f"the stored {self.granularity} chunks are not the documents' chunks")
        return cut.texts


@dataclass(frozen=True)
class ChunkChannel:
    """Documents split into chunks and the chunks' embeddings (rows aligned with ``chunks``)."""

    chunks: ChunkLayout
    embeddings: Matrix


def encode_chunks(
    ctx: Context,
    splitter: Callable[[str], Sequence[str]],
    *,
    view: str = PASSAGE,
    max_length: int | None = None,
    max_chunks_per_doc: int | None = MAX_CHUNKS_PER_DOC,
) -> ChunkChannel:
    """Split every document and encode the chunks once, as index-time work."""
    chunks = chunk_documents(ctx.doc_texts, splitter, max_chunks_per_doc=max_chunks_per_doc)
    with ctx.index_time():
        emb = ctx.encode_fn(chunks.texts, view, None, max_length)
    return ChunkChannel(chunks, emb)


def encode_granularity(ctx: Context, granularity: str) -> ChunkChannel:
    """Split every document at ``granularity`` (a key of :data:`SPLITTERS`) and encode it.

    With ``ctx.deployed.stored_embeddings`` (a deployed index's), the chunks' embeddings are
    gathered by their stored rows, no chunk text being cut or looked up (:class:`StoredChunks`).
    Else, with ``ctx.deployed.text_analyses``, the chunks are cut from the stored sentence and
    paragraph spans instead of splitting the texts again. The same chunks and embeddings either way.
    """
    stored = _stored(ctx, granularity, PASSAGE, None, MAX_CHUNKS_PER_DOC)
    if stored is not None:
        owner, emb = stored
        n_docs = len(ctx.doc_texts)
        layout = StoredChunks(owner, n_docs, ctx.doc_texts, granularity, MAX_CHUNKS_PER_DOC)
        return ChunkChannel(layout, emb)
    source = DeployedInputs.of(ctx).text_analyses
    if source is None:
        return encode_chunks(ctx, SPLITTERS[granularity])
    chunks = analyses_of(ctx).chunks(ctx.doc_texts, granularity, MAX_CHUNKS_PER_DOC)
    with ctx.index_time():
        emb = ctx.encode_fn(chunks.texts, PASSAGE, None, None)
    return ChunkChannel(chunks, emb)


def maxsim_scores(Q: Matrix, channel: ChunkChannel, mask: Mask | None) -> Scores:
    """Each document's best chunk cosine with each query (ColBERT MaxSim at chunk level)."""
    chunks = channel.chunks
    return maxsim(Q, channel.embeddings, chunks.owner, chunks.n_docs, mask=mask)


def topmeansim_scores(Q: Matrix, channel: ChunkChannel, mask: Mask | None) -> Scores:
    """Mean cosine of each document's chunks above the query's median chunk cosine."""
    chunks = channel.chunks
    return topmeansim(Q, channel.embeddings, chunks.owner, chunks.n_docs, mask=mask)


def maxsim_topmeansim_scores(
    Q: Matrix, channel: ChunkChannel, mask: Mask | None
) -> tuple[Scores, Scores]:
    """:func:`maxsim_scores` and :func:`topmeansim_scores`, each query-chunk cosine taken once."""
    chunks = channel.chunks
    return maxsim_topmeansim(Q, channel.embeddings, chunks.owner, chunks.n_docs, mask=mask)


def best_chunk(channel: ChunkChannel, q: NDArray[np.floating], doc: int) -> str:
    """The chunk of document ``doc`` most similar to the query vector ``q``."""
    owner = channel.chunks.owner
    rows = np.flatnonzero(owner == doc)
    sims = channel.embeddings[rows] @ np.asarray(q, dtype=np.float32)
    return channel.chunks.texts[int(rows[int(np.argmax(sims))])]


# --- documents and queries re-encoded ------------------------------------------------------


def _stored(
    ctx: Context, unit: str, view: str, max_length: int | None, max_per_doc: int | None
) -> tuple[NDArray[np.intp], Matrix] | None:
    """``ctx.deployed.stored_embeddings``' embeddings of an index-time encode, if it has them."""
    source = DeployedInputs.of(ctx).stored_embeddings  # a sandboxed program's context has none
    return None if source is None else source.embeddings(unit, view, max_length, max_per_doc)


def encode_documents(ctx: Context, view: str, max_length: int | None = None) -> Matrix:
    """Re-encode the whole documents under ``view`` (index-time work).

    With ``ctx.deployed.stored_embeddings`` (a deployed index's), gathered by stored row instead.
    """
    stored = _stored(ctx, "document", view, max_length, None)
    if stored is not None:
        return stored[1]
    with ctx.index_time():
        return ctx.encode_fn(list(ctx.doc_texts), view, None, max_length)


def expand_queries(
    ctx: Context, contexts: Sequence[str], view: str = QUERY, separator: str = " "
) -> Matrix:
    """Encode each query concatenated with its context text (query-time work)."""
    texts = [
        f"{q}{separator}{c}" if c else q for q, c in zip(ctx.query_texts, contexts, strict=True)
    ]
    return ctx.encode_fn(texts, view)


# --- the ready-made channels (the search prompt's) ------------------------------------------


def view_scores(Q: Any, ctx: Any, view: str = "text-matching") -> Scores:
    """Queries against the documents re-encoded under ``view`` (an index-time encode).

    Args:
        Q: ``(n_q, d)`` query embeddings.
        ctx: the program's context.
        view: the documents' view (``"retrieval.query"``, ``"text-matching"``, ...).

    """
    return _matmul(Q, encode_documents(ctx, view))


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
    channel = encode_chunks(ctx, CHUNK_UNITS[unit], max_chunks_per_doc=MAX_PIECES_PER_DOC)
    score = maxsim_scores if reduce == "max" else topmeansim_scores
    return score(np.asarray(Q, dtype=np.float32), channel, mask)


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
    *,
    mask: Mask | None = None,
    method: str = "zscore",
) -> Scores:
    """Fuse channels: weighted sum of row z-scores (method zscore) or rank fusion (rrf).

    ``zscore``: ``sum_i w_i * zscore_rows(channel_i)`` (each query's candidates standardised
    first, so channels on different scales mix); ``rrf``: reciprocal rank fusion of the
    channels' rankings (the weights are ignored). ``mask`` and ``method`` are keyword-only
    (``rrf`` takes no weights, so a positional second argument would mean two things).

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
