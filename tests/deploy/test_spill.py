"""The recorded embeddings of a build go to a scratch folder as they come, not to memory."""

from __future__ import annotations

import numpy as np
import pytest

from embedding_ttc.deploy.corpus import Document
from embedding_ttc.deploy.index import Index
from embedding_ttc.deploy.store import StoreBuilder
from embedding_ttc.errors import DatasetError

from . import QUERIES, corpus
from fakes import HashingEncoder


def blocks(seed: int = 0):
    rng = np.random.default_rng(seed)
    for b in range(5):
        texts = [f"text {(b * 7 + i) % 23}" for i in range(9)]  # repeats across blocks
        yield ("sentence", None, None), texts, rng.standard_normal((9, 6)).astype(np.float32)
        yield ("passage", 4, 32), texts[:3], rng.standard_normal((3, 4)).astype(np.float32)


def test_a_spilled_recording_holds_what_an_in_memory_one_holds(tmp_path):
    held, spilled = StoreBuilder(), StoreBuilder(tmp_path)
    for key, texts, emb in blocks():
        held.add(key, texts, emb)
        spilled.add(key, texts, emb)
        rows = held.rows(key, texts)
        assert np.array_equal(rows, spilled.rows(key, texts))
        np.testing.assert_array_equal(
            held.embedding_rows(key, rows), spilled.embedding_rows(key, rows)
        )
    a, b = held.groups(), spilled.groups()
    assert list(a) == list(b)
    for key in a:
        assert a[key][0] == b[key][0]
        assert isinstance(b[key][1], np.memmap)
        np.testing.assert_array_equal(a[key][1], b[key][1])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["00.f32", "01.f32"]
    assert (tmp_path / "00.f32").stat().st_size == len(a[("sentence", None, None)][0]) * 6 * 4


def test_a_build_leaves_no_scratch_folder_whether_it_succeeds_or_fails(tmp_path):
    encoder = HashingEncoder()
    index = Index.build(tmp_path / "ix", corpus(), encoder=encoder, program="SentMaxSim")
    index.add([Document("late", "", "A late document. About cats.")], encoder=encoder)
    assert not [p for p in tmp_path.rglob("*") if "spill" in p.name]
    with pytest.raises(DatasetError, match="duplicate document id"):  # inside the build
        Index.build(tmp_path / "ix2", [Document("a", "", "x"), Document("a", "", "y")],
                    encoder=encoder, program="SentMaxSim", reference_queries=QUERIES)  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == [".ix.lock", "ix"]
