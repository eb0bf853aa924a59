"""CoverageTriple's channel set: three granularities, a topic channel and ``D``, each centred.

:class:`CoverageChannels` holds the document side of CoverageTriple's eight channels (paper
App. "CoverageTriple"): sentences, consecutive sentence pairs and paragraphs, each pooled back
to documents with ColBERT's MaxSim (Khattab & Zaharia 2020) and TopMeanSim; the topic channel
(documents re-encoded at :data:`TOPIC_MAX_LENGTH` tokens); and the full-document channel.
The chunks are encoded once per corpus as index-time work through
:func:`~embedding_ttc.programs.primitives.channels.encode_granularity` (at most
:data:`~embedding_ttc.programs.primitives.chunking.MAX_CHUNKS_PER_DOC` chunks per document).
It is built once and scores any query matrix, so LexicalHybridRRF and CrossRoundRRF reuse it,
the latter with its refined queries at no extra encoder cost.

Debiasing (CoverageTriple: "all channels are debiased by subtracting their respective
embedding centroids before similarity computation"), our reading: each channel has one
centroid, the mean of its document-side embeddings (its chunks, its 128-token documents, or
``D``) over the documents that some query of the call ranks. The centroid is subtracted from
both sides, queries and chunks, which are then re-normalised, so a channel's similarity is the
cosine about the centroid. Two alternatives were rejected: without re-normalising, moving the
chunks by a constant shifts every chunk's similarity to a query by the same ``q · mu`` and no
ranking changes; and centring queries on the *query* centroid degenerates with few queries
(one query becomes the zero vector, two become antipodal), which a shortlist batch or a small
task can hand a program.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.encoders.base import PASSAGE
from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.primitives.channels import (
    SPLITTERS,
    ChunkChannel,
    ChunkLayout,
    encode_documents,
    encode_granularity,
    maxsim_topmeansim_scores,
)
from embedding_ttc.programs.primitives.feedback import NORM_EPS
from embedding_ttc.programs.primitives.late import maxsim_topmeansim_of
from embedding_ttc.programs.primitives.scores import Mask, Scores
from embedding_ttc.programs.recipe import Artifact

TOPIC_MAX_LENGTH = 128
"""Token budget of CoverageTriple's topic channel ("128-token truncation" in the paper)."""

COVERAGE_ARTIFACTS: tuple[Artifact, ...] = (
    *(Artifact(granularity, PASSAGE) for granularity in SPLITTERS),
    Artifact("document", PASSAGE, TOPIC_MAX_LENGTH),
)
"""The index-time encodes of :meth:`CoverageChannels.build`: the chunks, then the topic channel."""


ROW_BLOCK = 256
"""Rows normalised at a time: a block's float64 temporaries (0.8 MB at 384 dimensions) stay in
cache, where a float64 copy of 20,000 chunk embeddings (61 MB) would be streamed through
memory once per step."""


def unit_rows(X: NDArray[np.floating]) -> Matrix:
    """L2-normalised rows as float32; a row of norm at most ``NORM_EPS`` becomes zero."""
    return _unit_about(np.asarray(X), None)


def _unit_about(x: NDArray[np.floating], centre: NDArray[np.float64] | None) -> Matrix:
    """``unit(x - centre)`` row by row in float64 (``centre`` ``None``: ``unit(x)``), as float32.

    ``x`` (float32 or float64, untouched) is converted a block of rows at a time. The norm is
    taken as ``np.linalg.norm`` takes it (the square root of ``np.add.reduce`` over the
    squares) and the float64 quotient is rounded to float32 once: each row's arithmetic does
    not depend on the block it is in, so the result is the unblocked computation's, bit for bit.
    """
    rows = x.reshape(-1, x.shape[-1]) if x.ndim != 2 else x
    out = np.empty(rows.shape, dtype=np.float32)
    for lo in range(0, rows.shape[0], ROW_BLOCK):
        block = np.asarray(rows[lo : lo + ROW_BLOCK], dtype=np.float64)
        if centre is not None:
            block = block - centre
        norms = np.sqrt(np.add.reduce(block * block, axis=-1, keepdims=True))
        ok = norms > NORM_EPS
        dest = out[lo : lo + ROW_BLOCK]
        # The float64 quotient rounded into float32: its astype(float32), bit for bit.
        if ok.all():
            np.divide(block, norms, out=dest, casting="same_kind")
        else:
            dest[...] = 0.0
            np.divide(block, norms, out=dest, where=ok, casting="same_kind")
    return out.reshape(x.shape)


MEAN_BLOCK = 1024
"""Rows converted to float64 at a time by :func:`_mean_rows` (3 MB at 384 dimensions)."""


def _mean_rows(x: NDArray[np.floating]) -> NDArray[np.float64]:
    """``x.mean(axis=0, dtype=np.float64)`` bit for bit, without a float64 copy of ``x``.

    numpy reduces over the first axis row after row, each column on its own; the running sum
    is carried into the next block as its first row, so the float64 additions are the same
    ones in the same order, while a block's conversion stays in cache (``mean``'s own
    buffered conversion is about 1.6 times slower on 20,000 rows of 384).
    """
    n, width = x.shape
    total = np.add.reduce(x[:MEAN_BLOCK], axis=0, dtype=np.float64)
    carry = np.empty((MEAN_BLOCK + 1, width))
    for lo in range(MEAN_BLOCK, n, MEAN_BLOCK):
        block = x[lo : lo + MEAN_BLOCK]
        carry[0] = total
        carry[1 : len(block) + 1] = block
        np.add.reduce(carry[: len(block) + 1], axis=0, out=total)
    mean: NDArray[np.float64] = total / n
    return mean


SUM_BLOCK = 16
"""Rows added in float32 before the float64 sum by :func:`_mean_rows_live`."""


def _mean_rows_live(x: NDArray[np.floating]) -> NDArray[np.float64]:
    """The mean of the rows for the live form: float32 sums of 16 rows, added in float64.

    Within about 1e-8 of the float64 mean (relative, on 20,000 rows of 384) in half the time
    of :func:`_mean_rows`; the live form's bits are not the records', so it need not be
    ``mean``'s to the bit.
    """
    n, width = x.shape
    full = n - n % SUM_BLOCK
    partial = np.add.reduce(x[:full].reshape(-1, SUM_BLOCK, width), axis=1)
    total = partial.sum(axis=0, dtype=np.float64) + x[full:].sum(axis=0, dtype=np.float64)
    mean: NDArray[np.float64] = total / n
    return mean


LIVE_BLOCK = 512
"""Rows centred at a time by :meth:`Centred.cosines`: a block's float32 difference (0.8 MB at
384 dimensions) is normed and multiplied while it is in cache."""


@dataclass(frozen=True, eq=False)  # array fields have no boolean equality
class Centred:
    """Document-side embeddings and their centroid, for cosines about the centroid.

    Two forms, the same cosines to float32 rounding (about 1e-7), not bit for bit:

    * batch (``Centred.of(X, in_play)``): every row moved to the centroid and re-normalised
      once in float64 (:attr:`embeddings`), which many queries then share; the raw rows are
      not kept. Its bits are those the evaluation records were computed with.
    * live (``live=True``): the raw rows kept (:attr:`rows`); :meth:`cosines` centres them in
      float32 a block at a time and divides the product by their norms. For a query scored
      alone (a deployed request), which would pay the float64 pass over every row for one
      product.

    Attributes:
        centroid: ``(d,)`` mean of the rows in play (zero when none is).
        embeddings: batch form: ``(n, d)`` rows ``unit(x - centroid)``; ``None`` when live.
        rows: live form: ``(n, d)`` the embeddings as given; ``None`` in the batch form.

    """

    centroid: NDArray[np.float64]
    embeddings: Matrix | None = None
    rows: Matrix | None = None

    def __post_init__(self) -> None:
        if (self.embeddings is None) == (self.rows is None):
            raise ValueError("a Centred holds either its centred embeddings or its rows")

    @classmethod
    def of(cls, X: Matrix, in_play: NDArray[np.bool_], *, live: bool = False) -> Centred:
        """Centre ``X`` on the mean of its rows where ``in_play`` is True (module docstring)."""
        x = np.asarray(X)
        mean = _mean_rows_live if live else _mean_rows
        # The rows of ``x[in_play]`` when every row is in play are ``x``'s: no gather then.
        if not in_play.any():
            centroid = np.zeros(x.shape[1])
        elif in_play.all():
            centroid = mean(x)
        else:
            centroid = mean(x[in_play])
        if live:
            return cls(centroid, rows=x)
        return cls(centroid, embeddings=_unit_about(x, centroid))

    def queries(self, Q: Matrix) -> Matrix:
        """The queries about the same centroid, re-normalised (float64 arithmetic)."""
        return _unit_about(np.asarray(Q), self.centroid)

    def cosines(self, Q: Matrix) -> Scores:
        """``(n_q, n)`` cosines of ``Q`` and the rows about the centroid.

        Batch form: ``queries(Q) @ embeddings.T``. Live form: ``unit(q - mu) · (x - mu) /
        |x - mu|``, the rows' differences and norms in float32, one pass over the rows; a row
        within ``NORM_EPS`` of the centroid scores 0, as its zero row does in the batch form.
        """
        q = self.queries(Q)
        if self.embeddings is not None:
            batch: Scores = q @ self.embeddings.T
            return batch
        x = np.asarray(self.rows, dtype=np.float32)
        centre = self.centroid.astype(np.float32)
        out = np.empty((q.shape[0], x.shape[0]), dtype=np.float32)
        for lo in range(0, x.shape[0], LIVE_BLOCK):
            diff = x[lo : lo + LIVE_BLOCK] - centre
            norms = np.sqrt(np.einsum("ij,ij->i", diff, diff))
            ok = norms > NORM_EPS
            dest = out[:, lo : lo + LIVE_BLOCK]
            product = q @ diff.T
            if ok.all():
                np.divide(product, norms, out=dest)
            else:
                dest[...] = 0.0
                np.divide(product, norms, out=dest, where=ok)
        return out


def docs_in_play(mask: Mask | None, n_docs: int) -> NDArray[np.bool_]:
    """Documents that at least one query of the call ranks (all when there is no mask)."""
    if mask is None:
        return np.ones(n_docs, dtype=np.bool_)
    return np.asarray(mask.any(axis=0), dtype=np.bool_)


@dataclass(frozen=True)
class CoverageChannels:
    """The document side of CoverageTriple's channels, each centred on its centroid.

    Channels, in the order :meth:`scores` returns them: MaxSim and TopMeanSim for sentences,
    sentence pairs and paragraphs; the topic channel (documents encoded at
    :data:`TOPIC_MAX_LENGTH` tokens); the full-document channel (``D``, i.e. ``S`` about the
    corpus centroid).

    Attributes:
        chunks: per granularity of :data:`SPLITTERS`, its chunks (texts and owners).
        chunk_centres: per granularity, its chunk embeddings and their centroid.
        topic: the 128-token document embeddings and their centroid.
        documents: the base document embeddings ``D`` and their centroid.

    """

    chunks: tuple[ChunkLayout, ...]
    chunk_centres: tuple[Centred, ...]
    topic: Centred
    documents: Centred

    @classmethod
    def build(
        cls, D: Matrix, ctx: Context, mask: Mask | None, *, live: bool = False
    ) -> CoverageChannels:
        """Encode the three granularities and the topic channel (index time); centre all.

        ``live``: the channels of a query scored alone (:class:`Centred`'s live form); they
        score without a mask.
        """
        in_play = docs_in_play(mask, D.shape[0])
        chunks: list[ChunkLayout] = []
        centres: list[Centred] = []
        for granularity in SPLITTERS:
            raw = encode_granularity(ctx, granularity)
            chunks.append(raw.chunks)
            centres.append(Centred.of(raw.embeddings, in_play[raw.chunks.owner], live=live))
        topic = encode_documents(ctx, PASSAGE, TOPIC_MAX_LENGTH)
        return cls(
            chunks=tuple(chunks),
            chunk_centres=tuple(centres),
            topic=Centred.of(topic, in_play, live=live),
            documents=Centred.of(D, in_play, live=live),
        )

    def scores(self, Q: Matrix, mask: Mask | None) -> list[Scores]:
        """The eight channel matrices for queries ``Q`` (no encoder call).

        Raises:
            ValueError: a mask for live channels (they score every document).

        """
        out: list[Scores] = []
        for chunks, centre in zip(self.chunks, self.chunk_centres, strict=True):
            if centre.embeddings is not None:
                channel = ChunkChannel(chunks, centre.embeddings)
                out += maxsim_topmeansim_scores(centre.queries(Q), channel, mask)
            elif mask is None:
                out += maxsim_topmeansim_of(centre.cosines(Q), chunks.owner, chunks.n_docs)
            else:
                raise ValueError("live channels score every document: no mask")
        for centre in (self.topic, self.documents):
            out.append(centre.cosines(Q))
        return out
