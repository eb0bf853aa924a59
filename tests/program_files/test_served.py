"""Served primitives: a deployed call's BM25 and chunk rows equal what the texts give.

A program file in the sandbox reads ``ctx.doc_texts``; when its call is a deployed one (the
parent's context carries ``deployed``), ``BM25.fit`` and ``chunk_documents`` over them and
``encode_fn`` of their chunks are answered by the parent from the deployed inputs
(:mod:`embedding_ttc.program_files.sandbox.served`). Each is compared here, exactly, with the
same primitive run in this process over the plain texts, for an undeployed call, a deployed
call without stored work, and one with stored text analyses and stored chunk embeddings.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any

import numpy as np
import pytest

from embedding_ttc.program_files.sandbox.limits import LIBRARY_ROOT, SandboxLimits, child_env
from embedding_ttc.program_files.sandbox.program import SandboxedProgram
from embedding_ttc.program_files.sandbox.served import ServedInputs
from embedding_ttc.program_files.sandbox.verdict import SandboxFailure
from embedding_ttc.program_files.sandbox.warm import WarmProgram
from embedding_ttc.programs.base import Context, DeployedInputs
from embedding_ttc.programs.primitives.chunking import (
    chunk_documents,
    split_paragraphs,
    split_sentences,
)
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.text_analysis import ColumnAnalyses, analyze

DOCS = (
    "The cat sat on the mat. It purred all afternoon. Then it slept.\n\nA second paragraph "
    "about cats and mats. Cats like mats.",
    "Stock markets fell sharply. Investors sold their shares. Rates rose.",
    "Le chat dort sur le tapis. Il ronronne.\n\nLe marché a chuté. Les taux montent.",
    "",
    "one line without a full stop",
    "Dr. Smith met J. Doe in the U.S. They talked. Of 3.14 and more. The end. A fifth one.",
)
QUERIES = ("cats on mats", "marché des taux", "stock rates fell", "nothing matches zzz")
LIMITS = SandboxLimits(wall_seconds=30.0, memory_bytes=2 * 2**30, encode_texts_per_item=40.0)
DIM = 8

PROGRAMS = {
    "bm25": "out = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)",
    "sentence": "out = rows(Q, ctx, split_sentences, n_d)",
    "paragraph": "out = rows(Q, ctx, split_paragraphs, n_d)",
    "documents": "out = Q @ ctx.encode_fn(ctx.doc_texts, 'text-matching').T",
}
SOURCE = """\
import numpy as np

from embedding_ttc.programs.primitives.chunking import (
    chunk_documents,
    split_paragraphs,
    split_sentences,
)
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.lexical import BM25


def rows(Q, ctx, splitter, n_d):
    chunks = chunk_documents(ctx.doc_texts, splitter, max_chunks_per_doc=3)
    with ctx.index_time():
        vectors = ctx.encode_fn(chunks.texts, "retrieval.passage")
    # The child's own cut of a plain copy of the texts: the served chunks must be the same.
    own = chunk_documents(list(ctx.doc_texts), splitter, max_chunks_per_doc=3)
    if list(chunks.texts) != own.texts or not np.array_equal(chunks.owner, own.owner):
        raise ValueError("the served chunks are not the documents' chunks")
    return maxsim(Q, vectors, chunks.owner, n_d)


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    PRIMITIVE
    return np.asarray(out, dtype=np.float32)
"""


def encode(
    texts: Sequence[str], view: str = "retrieval.query", dim: Any = None, max_length: Any = None
) -> np.ndarray:
    """A deterministic encoder: each text's vector from its hash (and the view's)."""
    out = np.empty((len(texts), DIM), dtype=np.float32)
    for i, text in enumerate(texts):
        digest = hashlib.sha256(f"{view}\n{text}".encode()).digest()
        out[i] = np.frombuffer(digest, dtype=np.uint8)[:DIM].astype(np.float32) - 127.5
    return out / np.linalg.norm(out, axis=1, keepdims=True)


class Metered:
    """The parent's encoder, counting the texts it is asked to encode."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, texts, view="retrieval.query", dim=None, max_length=None):
        self.texts.extend(texts)
        return encode(texts, view, dim, max_length)


class StoredRows:
    """Stored chunk embeddings of the call's documents, as an index's chunk tables hold them.

    A test double for :class:`~embedding_ttc.deploy.chunk_rows.ColumnEmbeddings`, honest in
    what it returns: the chunks ``chunk_documents`` cuts, encoded by the same encoder.
    """

    def __init__(self, docs: Sequence[str]) -> None:
        self.docs = docs
        self.asked: list[tuple[str, str, int | None]] = []

    def embeddings(self, unit, view, max_length, max_per_doc):
        self.asked.append((unit, view, max_per_doc))
        if unit == "document":
            return np.arange(len(self.docs), dtype=np.intp), encode(self.docs, view)
        splitter = {"sentence": split_sentences, "paragraph": split_paragraphs}.get(unit)
        if splitter is None:
            return None
        chunks = chunk_documents(self.docs, splitter, max_chunks_per_doc=max_per_doc)
        return chunks.owner, encode(chunks.texts, view)


def context(kind: str, encode_fn: Any = encode, stored: type[StoredRows] = StoredRows) -> Context:
    """The call's context: undeployed, deployed with nothing stored, or with stored work."""
    deployed = None
    if kind == "bare":
        deployed = DeployedInputs()
    elif kind == "stored":
        analyses = analyze(DOCS)
        rows = np.arange(len(DOCS), dtype=np.intp)
        deployed = DeployedInputs(
            text_analyses=ColumnAnalyses(analyses, rows), stored_embeddings=stored(DOCS)
        )
    return Context(
        encode_fn=encode_fn,
        query_texts=QUERIES,
        doc_texts=DOCS,
        query_ids=tuple(f"q{i}" for i in range(len(QUERIES))),
        doc_ids=tuple(f"d{i}" for i in range(len(DOCS))),
        candidates=None,
        views_collapsed=False,
        index_time=nullcontext,
        deployed=deployed,
    )


def inputs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    Q, D = encode(QUERIES), encode(DOCS, "retrieval.passage")
    return Q, D, Q @ D.T


def expected(primitive: str) -> np.ndarray:
    """The primitive run in this process over the plain texts (the evaluation's values)."""
    Q, _, _ = inputs()
    if primitive == "bm25":
        return BM25.fit(list(DOCS)).scores(list(QUERIES))
    if primitive == "documents":
        return Q @ encode(list(DOCS), "text-matching").T
    splitter = split_sentences if primitive == "sentence" else split_paragraphs
    chunks = chunk_documents(list(DOCS), splitter, max_chunks_per_doc=3)
    return maxsim(Q, encode(chunks.texts, "retrieval.passage"), chunks.owner, len(DOCS))


@pytest.fixture
def spied(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How often the parent served each primitive."""
    counts = {"bm25": 0, "chunks": 0, "stored": 0}
    for name in counts:
        original = getattr(ServedInputs, name)

        def wrapper(self, *args, _name=name, _original=original, **kwargs):
            counts[_name] += 1
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(ServedInputs, name, wrapper)
    return counts


@pytest.mark.parametrize("primitive", sorted(PROGRAMS))
@pytest.mark.parametrize("kind", ["undeployed", "bare", "stored"])
def test_served_primitives_equal_their_values_over_the_texts(primitive, kind, spied):
    source = SOURCE.replace("PRIMITIVE", PROGRAMS[primitive])
    metered = Metered()
    got = SandboxedProgram(source, f"served-{primitive}", LIMITS)(*inputs(), context(kind, metered))
    np.testing.assert_array_equal(got, expected(primitive))
    served = kind != "undeployed"
    assert spied["bm25"] == (served and primitive == "bm25")
    assert bool(spied["chunks"]) == (served and primitive in ("sentence", "paragraph"))
    if kind == "stored" and primitive != "bm25":
        # Served by stored row: the parent's encoder was asked for no text.
        assert spied["stored"] == 1 and metered.texts == []
    elif primitive != "bm25":
        assert metered.texts  # encoded through the metered encoder, as before


def test_a_warm_child_serves_each_call_its_own_documents():
    source = SOURCE.replace(
        "PRIMITIVE", PROGRAMS["bm25"] + " + rows(Q, ctx, split_paragraphs, n_d)"
    )
    program = WarmProgram(source, "served-warm", LIMITS)
    try:
        for kind in ("stored", "bare", "stored"):
            got = program(*inputs(), context(kind))
            np.testing.assert_array_equal(got, expected("bm25") + expected("paragraph"))
        assert program.started == 1
    finally:
        program.close()


def test_parent_side_primitives_equal_the_texts_ones():
    for kind in ("bare", "stored"):
        served = ServedInputs(context(kind))
        np.testing.assert_array_equal(
            served.bm25(["cats", "taux", ""]), BM25.fit(DOCS).scores(["cats", "taux", ""])
        )
        for granularity, splitter in (
            ("sentence", split_sentences),
            ("paragraph", split_paragraphs),
        ):
            for cap in (None, 1, 3):
                want = chunk_documents(DOCS, splitter, max_chunks_per_doc=cap)
                got = served.chunks(granularity, cap)
                assert list(got.texts) == want.texts
                np.testing.assert_array_equal(got.owner, want.owner)


@pytest.mark.parametrize(
    ("granularity", "cap", "message"),
    [
        ("pair", 3, "no chunks of unit 'pair'"),
        ("sentence", 0, "max_per_doc"),
        ("sentence", True, "max_per_doc"),
    ],
)
def test_a_bad_chunk_request_is_named(granularity, cap, message):
    with pytest.raises(ValueError, match=message):
        ServedInputs(context("bare")).chunks(granularity, cap)


def test_stored_rows_that_are_not_the_chunks_fail_the_call():
    class Shifted(StoredRows):
        def embeddings(self, unit, view, max_length, max_per_doc):
            owner, emb = super().embeddings(unit, view, max_length, max_per_doc)
            return owner[::-1].copy(), emb

    source = SOURCE.replace("PRIMITIVE", PROGRAMS["paragraph"])
    with pytest.raises(SandboxFailure, match="not one per text of the call"):
        SandboxedProgram(source, "served-shifted", LIMITS)(
            *inputs(), context("stored", stored=Shifted)
        )


def test_the_child_runs_the_library_its_parent_runs():
    # Served primitives must be the parent's code: an installed copy of another checkout
    # (an editable install elsewhere) would give the child other primitives.
    assert child_env(LIMITS, "/tmp/work")["PYTHONPATH"] == LIBRARY_ROOT
    source = (
        "import embedding_ttc\n\n\ndef program(Q, D, S, ctx):\n"
        f"    if not embedding_ttc.__file__.startswith({LIBRARY_ROOT!r}):\n"
        "        raise ValueError(embedding_ttc.__file__)\n"
        "    return S\n"
    )
    Q, D, S = inputs()
    np.testing.assert_array_equal(
        SandboxedProgram(source, "library", LIMITS)(Q, D, S, context("bare")), S
    )


def test_a_cap_that_is_not_a_plain_int_is_cut_in_the_child(spied):
    # chunk_documents takes True as a cap of 1; the parent serves plain ints only, so such a
    # call is cut in the child, from the texts, with the values it always had.
    source = SOURCE.replace("max_chunks_per_doc=3", "max_chunks_per_doc=True").replace(
        "PRIMITIVE", PROGRAMS["paragraph"]
    )
    got = SandboxedProgram(source, "served-bool-cap", LIMITS)(*inputs(), context("stored"))
    Q, _, _ = inputs()
    chunks = chunk_documents(list(DOCS), split_paragraphs, max_chunks_per_doc=True)
    want = maxsim(Q, encode(chunks.texts, "retrieval.passage"), chunks.owner, len(DOCS))
    np.testing.assert_array_equal(got, want)
    assert spied["chunks"] == 0
