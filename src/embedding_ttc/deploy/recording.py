"""The recording pass of a build: the program run over documents, its index-time encodes kept.

The program runs over the documents in blocks of :data:`BUILD_BLOCK` with a few sample queries
and an ``encode_fn`` that records every encode made inside ``ctx.index_time()``
(:class:`~embedding_ttc.deploy.store.StoreEncodeFn`): those are the index-time embeddings the
index stores and serves later. The recording must produce every artifact the program's recipe
declares; :func:`chunk_tables` checks that and maps each declared artifact's texts to their
documents and store rows. A program without a written recipe (a program file) has its
artifacts derived from this recording instead (:mod:`embedding_ttc.deploy.derive`).

A library program's recipe says what its index-time encodes are, so running it over every
block is work spent only to learn what is already declared (at a million documents, hours of
the program's own arithmetic over sample queries). :func:`record_declared` runs it over the
first block only, which still measures what it encodes per query and per document and checks
its recipe (:func:`chunk_tables` fails when a declared artifact was not encoded), then encodes
the declared artifacts of every document straight into the recording, longest first in chunks
of :data:`~embedding_ttc.deploy.store.RECORD_CHUNK`, as the recording pass does.

The program is passed in, built by the caller: a library program, or a program file's
source run in the sandbox. A failure of the program (a crash, a timeout, an invalid matrix)
is a :class:`~embedding_ttc.deploy.errors.DeployError` naming the program and the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.deploy.errors import DeployError
from embedding_ttc.deploy.store import (
    RECORD_CHUNK,
    IndexEmbeddingStore,
    StoreBuilder,
    StoreEncodeFn,
    StoreKey,
    StoreLookup,
)
from embedding_ttc.encoders.base import QUERY, Encoder
from embedding_ttc.encoders.encode import encode_texts
from embedding_ttc.programs.base import Context, Matrix, Program
from embedding_ttc.programs.outcome import CandidateError
from embedding_ttc.programs.output import check_output
from embedding_ttc.programs.recipe import Recipe

BUILD_BLOCK = 2048
"""Documents per program call of the recording pass (bounds its memory)."""

Progress = Callable[[str, int, int], None]
"""Called with ``(stage, done, total)`` while an index is built or extended (total 0: unknown)."""


@dataclass(frozen=True)
class Recording:
    """The outcome of running the program over documents with a recording ``encode_fn``."""

    recorded: StoreBuilder
    index_encodes: int
    query_encodes: int
    calls: int


def record_encodes(
    program: Program,
    encoder: Encoder,
    doc_texts: Sequence[str],
    D: Matrix,
    queries: Sequence[str],
    store: StoreLookup,
    progress: Progress | None,
    spill: Path | None = None,
) -> Recording:
    """Run the program over ``doc_texts`` in blocks and record its index-time encodes.

    ``spill``: a folder the recorded embeddings are written to as they come
    (:class:`~embedding_ttc.deploy.store.StoreBuilder`); ``None`` keeps them in memory.

    Raises:
        DeployError: the program failed on a block (its status and reason in the message).

    """
    recorder = StoreBuilder(spill)
    Q = encode_texts(encoder, list(queries), QUERY)
    index_encodes = query_encodes = calls = 0
    encoded = 0

    def advance(n: int) -> None:
        nonlocal encoded
        encoded += n
        if progress is not None:
            progress("encode index-time texts", encoded, 0)

    for start in range(0, len(doc_texts), BUILD_BLOCK):
        stop = min(start + BUILD_BLOCK, len(doc_texts))
        Db = np.asarray(D[start:stop], dtype=np.float32)
        enc = StoreEncodeFn(store, encoder, recorder, advance)
        ctx = Context(
            encode_fn=enc,
            query_texts=tuple(queries),
            doc_texts=tuple(doc_texts[start:stop]),
            query_ids=tuple(f"sample-{i}" for i in range(len(queries))),
            doc_ids=tuple(str(j) for j in range(start, stop)),
            views_collapsed=encoder.info.collapsed,
            index_time=enc.index_time,
        )
        S = Q @ Db.T
        try:
            check_output(program(Q, Db, S, ctx), S.shape, program.name)
        except CandidateError as exc:
            raise DeployError(
                f"program {program.name} failed during the recording pass over documents "
                f"{start} to {stop - 1} ({exc.status.value}): {exc.reason}"
            ) from None
        index_encodes += enc.stats.live_texts - enc.stats.query_texts
        query_encodes += enc.stats.query_texts
        calls += 1
        if progress is not None:
            progress("run the program over the documents", stop, len(doc_texts))
    return Recording(recorder, index_encodes, query_encodes, calls)


def record_declared(
    program: Program,
    recipe: Recipe,
    encoder: Encoder,
    doc_texts: Sequence[str],
    D: Matrix,
    queries: Sequence[str],
    progress: Progress | None,
    spill: Path | None = None,
) -> Recording:
    """The recording pass over the first block, then the recipe's artifacts of every document.

    Raises:
        DeployError: the program failed on the first block.

    """
    first = min(BUILD_BLOCK, len(doc_texts))
    sample = record_encodes(
        program,
        encoder,
        doc_texts[:first],
        D[:first],
        queries,
        IndexEmbeddingStore(),
        progress,
        spill,
    )
    recorder = sample.recorded
    encoded = 0
    for artifact in recipe.active_artifacts(encoder.info.collapsed):
        key = artifact.key
        wanted = list(dict.fromkeys(artifact.texts(doc_texts).texts))
        todo = [t for t, row in zip(wanted, recorder.rows(key, wanted), strict=True) if row < 0]
        todo.sort(key=len, reverse=True)  # longest first: low padding, as recorded
        view, dim, max_length = key
        for start in range(0, len(todo), RECORD_CHUNK):
            chunk = todo[start : start + RECORD_CHUNK]
            recorder.add(
                key, chunk, encoder.encode(chunk, view=view, dim=dim, max_length=max_length)
            )
            encoded += len(chunk)
            if progress is not None:
                progress(f"encode {artifact.describe()}", start + len(chunk), len(todo))
    return Recording(recorder, sample.index_encodes + encoded, sample.query_encodes, sample.calls)


RowsOf = Callable[[StoreKey, Sequence[str]], NDArray[np.intp]]
ChunkTable = tuple[str, StoreKey, NDArray[np.intp], NDArray[np.intp]]


def chunk_tables(
    recipe: Recipe, collapsed: bool, doc_texts: Sequence[str], rows_of: RowsOf, doc_offset: int
) -> list[ChunkTable]:
    """Per declared artifact: its label, key, owner (document row) and store row per text.

    Raises:
        DeployError: when the recording did not produce a declared artifact (the recipe and
            the program disagree).

    """
    out = []
    for artifact in recipe.active_artifacts(collapsed):
        chunks = artifact.texts(doc_texts)
        rows = rows_of(artifact.key, chunks.texts)
        if (rows < 0).any():
            missing = int((rows < 0).sum())
            raise DeployError(
                f"the split of this program declares {artifact.describe()}, but the program "
                f"did not encode {missing} of its {len(rows)} texts at index time: the recipe "
                "the program declares (its recipe attribute) is out of date"
            )
        out.append((artifact.describe(), artifact.key, chunks.owner + doc_offset, rows))
    return out
