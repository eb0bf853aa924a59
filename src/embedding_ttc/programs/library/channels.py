"""Building blocks shared by the library's programs: candidates, chunk channels, expansions.

Each helper is a thin composition of :mod:`embedding_ttc.programs.primitives` with the
program :class:`~embedding_ttc.programs.base.Context`, so that every program spends encoder
calls and respects candidates in the same way:

* document-side encodes (chunks, documents under another view) run inside
  ``ctx.index_time()`` and are metered as amortisable index work;
* query-side encodes (expanded queries) are metered as per-query work;
* every ranking, statistic and anchor is taken over each query's candidates only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.encoders.base import PASSAGE, QUERY
from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.primitives.chunking import (
    MAX_CHUNKS_PER_DOC,
    Chunks,
    chunk_documents,
)
from embedding_ttc.programs.primitives.scores import Mask, candidate_mask


def mask_for(ctx: Context, S: Matrix) -> Mask | None:
    """The candidate mask of this call (``None`` when every query ranks every document)."""
    return candidate_mask(S.shape[0], S.shape[1], ctx.candidates)


def candidates_of(ctx: Context, row: int, n_docs: int) -> NDArray[np.intp]:
    """Column indices that query ``row`` ranks."""
    if ctx.candidates is None:
        return np.arange(n_docs, dtype=np.intp)
    return np.asarray(ctx.candidates[row], dtype=np.intp)


@dataclass(frozen=True)
class ChunkChannel:
    """Documents split into chunks and the chunks' embeddings (rows aligned with ``chunks``)."""

    chunks: Chunks
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


def encode_documents(ctx: Context, view: str, max_length: int | None = None) -> Matrix:
    """Re-encode the whole documents under ``view`` (index-time work)."""
    with ctx.index_time():
        return ctx.encode_fn(list(ctx.doc_texts), view, None, max_length)


def best_chunk(channel: ChunkChannel, q: NDArray[np.floating], doc: int) -> str:
    """The chunk of document ``doc`` most similar to the query vector ``q``."""
    owner = channel.chunks.owner
    rows = np.flatnonzero(owner == doc)
    sims = channel.embeddings[rows] @ np.asarray(q, dtype=np.float32)
    return channel.chunks.texts[int(rows[int(np.argmax(sims))])]


def expand_queries(
    ctx: Context, contexts: Sequence[str], view: str = QUERY, separator: str = " "
) -> Matrix:
    """Encode each query concatenated with its context text (query-time work)."""
    texts = [
        f"{q}{separator}{c}" if c else q for q, c in zip(ctx.query_texts, contexts, strict=True)
    ]
    return ctx.encode_fn(texts, view)
