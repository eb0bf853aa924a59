"""Index-time embeddings by stored row: the same texts' embeddings as the text lookup, same scores.

On a real packaged task (aila_statutes, the fast static encoder) indexed in two segments (a
build, then ``index add`` with a document repeating an earlier text, whose encodes the new
segment copies), candidate sets spanning both segments in any order.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import numpy as np
import pytest

from embedding_ttc.deploy.chunk_rows import ColumnEmbeddings
from embedding_ttc.deploy.corpus import Document
from embedding_ttc.deploy.errors import IndexCorruptError
from embedding_ttc.deploy.index import Index
from embedding_ttc.deploy.reranker import Reranker
from embedding_ttc.deploy.store import StoreEncodeFn
from embedding_ttc.encoders.base import PASSAGE, QUERY
from embedding_ttc.encoders.cache import CachedEncoder
from embedding_ttc.encoders.catalog import load_encoder
from embedding_ttc.programs.base import Context, DeployedInputs, Matrix, Program
from embedding_ttc.programs.catalog import get_program
from embedding_ttc.programs.primitives.channels import (
    SPLITTERS,
    StoredChunks,
    best_chunk,
    encode_granularity,
)
from embedding_ttc.programs.primitives.chunking import MAX_CHUNKS_PER_DOC, chunk_documents
from embedding_ttc.programs.primitives.text_analysis import ragged_positions
from embedding_ttc.tasks.catalog import load_task

FAST_ENCODER = "tokenlearn-static-64"
FIRST = 50  # documents of the first segment; the rest, and a repeated text, are added
CHUNKED = ("LexicalHybridRRF", "CrossRoundRRF", "CoverageTriple", "SentMaxSim", "AdaptGranularity")


@pytest.fixture(scope="module")
def aila_docs(packaged_datasets) -> list[Document]:
    task = load_task("aila_statutes", packaged_datasets)
    docs = [
        Document(i, t, b)
        for i, t, b in zip(task.doc_ids, task.doc_titles, task.doc_bodies, strict=True)
    ]
    return [*docs, Document("repeat-3", docs[3].title, docs[3].text)]


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    return CachedEncoder(load_encoder(FAST_ENCODER), tmp_path_factory.mktemp("rows-cache"))


@pytest.fixture(scope="module")
def two_segments(aila_docs, encoder, tmp_path_factory):
    """Per program: its index of aila_statutes in two segments (built once per module)."""
    root = tmp_path_factory.mktemp("rows")
    built: dict[str, Index] = {}

    def get(program: str) -> Index:
        if program not in built:
            index = Index.build(
                root / program, aila_docs[:FIRST], encoder=encoder, program=program,
                reference_queries=["penalty for theft", "bail conditions", "land acquisition"],
            )  # fmt: skip
            built[program] = index.add(aila_docs[FIRST:], encoder=encoder)
            assert len(built[program].segments) == 2
        return built[program]

    return get


def spanning(index: Index) -> np.ndarray:
    """Candidate rows from both segments, the repeated text's among them, not in row order."""
    n = len(index)
    rows = np.array([n - 1, 3, 60, 0, 49, 50, 17, 81, 12, 70], dtype=np.intp)
    assert (rows < FIRST).any() and (rows >= FIRST).any()
    return rows


def by_text(index: Index, texts: list[str], unit: str, view: str, max_length: int | None):
    """The owners and embeddings the text path gives: texts cut, then looked up in the store."""
    if unit == "document":
        owner = np.arange(len(texts), dtype=np.intp)
        pieces = texts
    else:
        chunks = chunk_documents(texts, SPLITTERS[unit], max_chunks_per_doc=MAX_CHUNKS_PER_DOC)
        owner, pieces = chunks.owner, chunks.texts
    key = (view, None, max_length)
    rows = index.store.rows(key, pieces)
    assert (rows >= 0).all()
    return owner, index.store.take(key, rows)


ENCODES = [
    ("sentence", PASSAGE, None),
    ("pair", PASSAGE, None),
    ("paragraph", PASSAGE, None),
    ("document", PASSAGE, 128),
    ("document", QUERY, None),
]


@pytest.mark.parametrize(("unit", "view", "max_length"), ENCODES)
def test_stored_rows_give_the_text_lookups_embeddings_across_two_segments(
    two_segments, encoder, unit, view, max_length
):
    index = two_segments("LexicalHybridRRF")
    rows = spanning(index)
    texts = index.texts(rows)
    enc = StoreEncodeFn(index.store, encoder)
    source = ColumnEmbeddings(index.chunks, rows, (), enc)
    cap = None if unit == "document" else MAX_CHUNKS_PER_DOC
    found = source.embeddings(unit, view, max_length, cap)
    assert found is not None
    owner, emb = found
    want_owner, want = by_text(index, texts, unit, view, max_length)
    np.testing.assert_array_equal(owner, want_owner)
    np.testing.assert_array_equal(emb, want)  # the same bits
    assert enc.stats.store_texts == len(owner) and enc.stats.live_texts == 0
    # The repeated text's chunks (in the second segment, copied) are those of the original.
    at = {int(r): i for i, r in enumerate(rows)}
    np.testing.assert_array_equal(emb[owner == at[len(index) - 1]], emb[owner == at[3]])


def test_documents_given_as_texts_are_cut_and_encoded_after_the_held_ones(two_segments, encoder):
    index = two_segments("SentMaxSim")
    rows = spanning(index)[:4]
    live = ["A new statute. It has two sentences.", "One more, never indexed."]
    enc = StoreEncodeFn(index.store, encoder)
    found = ColumnEmbeddings(index.chunks, rows, live, enc).embeddings(
        "sentence", PASSAGE, None, MAX_CHUNKS_PER_DOC
    )
    assert found is not None
    owner, emb = found
    want_owner, want = by_text(index, index.texts(rows), "sentence", PASSAGE, None)
    held = owner < rows.size
    np.testing.assert_array_equal(owner[held], want_owner)
    np.testing.assert_array_equal(emb[held], want)
    cut = chunk_documents(live, SPLITTERS["sentence"], max_chunks_per_doc=MAX_CHUNKS_PER_DOC)
    assert len(cut.texts) == 3
    np.testing.assert_array_equal(owner[~held], cut.owner + rows.size)
    expected = encoder.encode(cut.texts, view=PASSAGE)
    np.testing.assert_allclose(emb[~held], expected, rtol=0, atol=1e-6)
    assert enc.stats.live_texts == 3  # the live documents' chunks went to the encoder


def test_an_encode_the_index_does_not_store_is_left_to_the_text_path(two_segments, encoder):
    index = two_segments("SentMaxSim")  # stores sentences only
    source = ColumnEmbeddings(
        index.chunks, spanning(index), (), StoreEncodeFn(index.store, encoder)
    )
    assert source.embeddings("paragraph", PASSAGE, None, MAX_CHUNKS_PER_DOC) is None
    assert source.embeddings("sentence", PASSAGE, None, 4) is None  # another cap
    assert source.embeddings("document", QUERY, None, None) is None
    assert source.embeddings("word", PASSAGE, None, None) is None


class WithoutStoredRows:
    """The program, run with the context's stored embeddings removed (the text lookup path)."""

    def __init__(self, program: Program) -> None:
        self.inner = program
        self.name = program.name
        self.removed = 0  # calls whose context had them (the recording pass's has none)

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        deployed = ctx.deployed
        self.removed += deployed is not None and deployed.stored_embeddings is not None
        if deployed is not None:
            ctx = dataclasses.replace(
                ctx, deployed=dataclasses.replace(deployed, stored_embeddings=None)
            )
        return self.inner(Q, D, S, ctx)


@pytest.mark.parametrize("program", CHUNKED)
def test_deployed_scores_are_the_same_bits_with_and_without_stored_rows(
    two_segments, encoder, aila_docs, program
):
    index = two_segments(program)
    rows = np.sort(spanning(index))
    ids = [index.doc_ids[int(r)] for r in rows]
    queries = ["punishment for cheating", "right to property"]
    fast = Reranker(index, encoder)
    slow = Reranker(index, encoder)
    slow.program = without = WithoutStoredRows(get_program(program))
    calls = 0
    for joint in (False, True):
        got = fast.score(queries, [ids, ids[2:]], joint=joint)
        want = slow.score(queries, [ids, ids[2:]], joint=joint)
        calls += want.stats.program_calls
        for x, y in zip(got.scores, want.scores, strict=True):
            np.testing.assert_array_equal(x, y)
        assert got.stats.index_misses == 0 and got.stats.program_encodes == 0
    # Texts in: held documents by stored row, a document the index lacks computed live.
    given = [aila_docs[int(r)].joined for r in rows[:5]] + ["A statute nobody indexed. On fines."]
    got_t = fast.score_texts(queries[0], given)
    want_t = slow.score_texts(queries[0], given)
    assert got_t.live == 1 and got_t.stats.live_documents == 1
    np.testing.assert_array_equal(got_t.scores, want_t.scores)
    assert without.removed == calls + want_t.stats.program_calls > 0  # every scoring call


def test_stored_chunks_cut_their_texts_only_when_read(two_segments, encoder):
    index = two_segments("SentMaxSim")
    rows = spanning(index)
    texts = index.texts(rows)
    enc = StoreEncodeFn(index.store, encoder)
    ctx = Context(
        encode_fn=enc, query_texts=("q",), doc_texts=tuple(texts), query_ids=("q0",),
        doc_ids=tuple(index.doc_ids[int(r)] for r in rows), index_time=enc.index_time,
        deployed=DeployedInputs(stored_embeddings=ColumnEmbeddings(index.chunks, rows, (), enc)),
    )  # fmt: skip
    channel = encode_granularity(ctx, "sentence")
    assert isinstance(channel.chunks, StoredChunks)
    assert "texts" not in vars(channel.chunks)  # nothing cut yet
    cut = chunk_documents(texts, SPLITTERS["sentence"], max_chunks_per_doc=MAX_CHUNKS_PER_DOC)
    assert list(channel.chunks.texts) == cut.texts
    q = channel.embeddings[7]
    assert best_chunk(channel, q, int(channel.chunks.owner[7])) == cut.texts[7]


def test_ragged_positions():
    starts = np.array([5, 0, 9], dtype=np.int64)
    lengths = np.array([2, 0, 3], dtype=np.int64)
    assert ragged_positions(starts, lengths).tolist() == [5, 6, 9, 10, 11]
    assert ragged_positions(starts[:0], lengths[:0]).tolist() == []


def test_a_chunk_table_that_is_not_its_segments_is_refused(two_segments, tmp_path: Path):
    shutil.copytree(two_segments("SentMaxSim").directory, tmp_path / "ix")
    segment = Index.load(tmp_path / "ix").manifest.segments[0]
    (record,) = [c for c in segment.chunks if c.artifact == "sentence@retrieval.passage"]
    owner_file = tmp_path / "ix" / "segments" / segment.name / f"{record.file}.owner.npy"
    owner = np.load(owner_file)
    owner[len(owner) // 2 :] = 0  # no longer non-decreasing over the documents
    np.save(owner_file, owner)  # same size: the index still loads
    broken = Index.load(tmp_path / "ix")
    with pytest.raises(IndexCorruptError, match="not a chunk table"):
        broken.chunks.gather("sentence@retrieval.passage", np.arange(3))
