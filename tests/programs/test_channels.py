"""The ready-made score channels: values against the primitives they compose, metering, masks."""

from __future__ import annotations

import numpy as np
import pytest

from embedding_ttc.programs.library.hybrid_evidence import ranked_bm25
from embedding_ttc.programs.primitives import channels
from embedding_ttc.programs.primitives.chunking import chunk_documents, split_sentences
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.late import maxsim
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import candidate_mask, rrf, zscore_rows
from embedding_ttc.programs.text.analyses import analyze
from embedding_ttc.programs.text.bm25 import bm25_analysed
from embedding_ttc.tasks.task import RetrievalTask

from fakes import HashingEncoder
from library_support import direct_call

POOLS = [np.array([0, 1, 2]), np.array([1, 2, 3, 4]), np.array([0, 4])]


def long_task(tiny: RetrievalTask) -> RetrievalTask:
    """The tiny task with multi-sentence documents, so chunking has something to split."""
    bodies = [
        f"{b}. The second sentence of {i}. And a third one here."
        for i, b in enumerate(tiny.doc_bodies)
    ]
    return RetrievalTask(**{**tiny.__dict__, "name": "tiny-long", "doc_bodies": bodies})


def test_view_scores_encodes_documents_once_at_index_time(tiny_task):
    encoder = HashingEncoder(dim=32, two_views=True)
    Q, _, _, ctx, meter = direct_call(tiny_task, encoder)
    out = channels.view_scores(Q, ctx, "retrieval.query")
    D_rev = encoder.encode(list(tiny_task.doc_texts), view="retrieval.query")
    np.testing.assert_allclose(out, Q @ D_rev.T, atol=1e-6)
    assert out.dtype == np.float32 and out.shape == (3, 5)
    counts = meter.snapshot()
    assert counts.total(side="index") == 5 and counts.total(side="query") == 0


def test_query_view_scores_encodes_queries_at_query_time(tiny_task):
    encoder = HashingEncoder(dim=32, two_views=True)
    _, D, _, ctx, meter = direct_call(tiny_task, encoder)
    out = channels.query_view_scores(D, ctx, "text-matching")
    Qv = encoder.encode(list(tiny_task.query_texts), view="text-matching")
    np.testing.assert_allclose(out, Qv @ D.T, atol=1e-6)
    assert meter.snapshot().total(side="query") == 3


def test_chunk_scores_is_sentence_maxsim(tiny_task):
    task = long_task(tiny_task)
    encoder = HashingEncoder(dim=64)
    Q, _, _, ctx, meter = direct_call(task, encoder)
    out = channels.chunk_scores(Q, ctx, "sentence", "max")
    chunks = chunk_documents(task.doc_texts, split_sentences, max_chunks_per_doc=16)
    C = encoder.encode(list(chunks.texts), view="retrieval.passage")
    np.testing.assert_allclose(out, maxsim(Q, C, chunks.owner, chunks.n_docs), atol=1e-6)
    assert meter.snapshot().total(side="index") == len(chunks.texts) > 5


@pytest.mark.parametrize("unit", ["sentence", "sentence_pair", "paragraph"])
@pytest.mark.parametrize("reduce", ["max", "topmean"])
def test_chunk_scores_every_unit_and_reducer_respects_the_mask(tiny_task, unit, reduce):
    Q, _, S, ctx, _ = direct_call(long_task(tiny_task), HashingEncoder(dim=32), POOLS)
    mask = candidate_mask(*S.shape, ctx.candidates)
    out = channels.chunk_scores(Q, ctx, unit, reduce, mask)
    assert out.shape == S.shape and np.isfinite(out).all()
    assert (out[~mask] == 0).all()


def test_chunk_scores_names_a_bad_unit_or_reducer(tiny_task):
    Q, _, _, ctx, _ = direct_call(tiny_task, HashingEncoder())
    with pytest.raises(ValueError, match="unknown unit 'word'; units: sentence"):
        channels.chunk_scores(Q, ctx, "word")
    with pytest.raises(ValueError, match="unknown reduce 'mean'"):
        channels.chunk_scores(Q, ctx, "sentence", "mean")


def test_bm25_scores_is_bm25(tiny_task):
    _, _, _, ctx, meter = direct_call(tiny_task, HashingEncoder())
    expected = BM25.fit(tiny_task.doc_texts).scores(tiny_task.query_texts)
    np.testing.assert_array_equal(channels.bm25_scores(ctx), expected)
    assert meter.snapshot().total() == 0


def test_the_two_bm25_paths_agree_bit_for_bit(tiny_task):
    """Parity where the paths merge: the bm25s index and the analysed arithmetic of ``text.bm25``.

    Without candidates, the library's BM25 over the ranked documents ranks every document, so it
    must equal the prompt's channel, which indexes the texts with ``bm25s``.
    """
    _, _, _, ctx, _ = direct_call(tiny_task, HashingEncoder())
    np.testing.assert_array_equal(ranked_bm25(ctx), channels.bm25_scores(ctx))
    analysed = bm25_analysed(tiny_task.query_texts, analyze(tiny_task.doc_texts))
    np.testing.assert_array_equal(analysed, channels.bm25_scores(ctx))
    assert analysed.any()  # the tiny task shares words between queries and documents


def test_prf_scores_rescores_the_soft_centroid_query(tiny_task):
    Q, D, S, ctx, _ = direct_call(tiny_task, HashingEncoder(dim=32), POOLS)
    mask = candidate_mask(*S.shape, ctx.candidates)
    moved = soft_centroid_query(Q, D, S, k=2, alpha=0.3, mask=mask)
    out = channels.prf_scores(Q, D, S, k=2, alpha=0.3, mask=mask)
    np.testing.assert_allclose(out, moved @ D.T, atol=1e-6)


def test_prefix_scores_is_the_cosine_of_renormalised_prefixes():
    rng = np.random.default_rng(0)
    Q, D = rng.normal(size=(3, 8)), rng.normal(size=(4, 8))
    out = channels.prefix_scores(Q, D, 2)
    q = Q[:, :2] / np.linalg.norm(Q[:, :2], axis=1, keepdims=True)
    d = D[:, :2] / np.linalg.norm(D[:, :2], axis=1, keepdims=True)
    np.testing.assert_allclose(out, q @ d.T, atol=1e-6)
    assert np.abs(out).max() <= 1.0 + 1e-6
    with pytest.raises(ValueError, match="dims must be >= 1"):
        channels.prefix_scores(Q, D, 0)


def test_fuse_by_zscores_and_by_rank():
    rng = np.random.default_rng(1)
    A, B = rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    mask = rng.random((3, 5)) > 0.3
    mask[:, 0] = True
    fused = channels.fuse([A, B], [1.0, 0.5], mask=mask)
    expected = zscore_rows(A.astype(np.float32), mask) + 0.5 * zscore_rows(
        B.astype(np.float32), mask
    )
    np.testing.assert_allclose(fused, expected, atol=1e-6)
    assert fused.dtype == np.float32
    np.testing.assert_allclose(
        channels.fuse([A, B], None, mask=mask, method="rrf"), rrf([A, B], mask=mask)
    )
    np.testing.assert_array_equal(channels.fuse([A, B]), channels.fuse([A, B], [1, 1]))


@pytest.mark.parametrize(
    ("args", "options", "message"),
    [
        (([],), {}, "at least one channel"),
        (([np.zeros((2, 3)), np.zeros((3, 2))],), {}, "differ in shape"),
        (([np.zeros((2, 3))], [1.0, 2.0]), {}, "1 channels but 2 weights"),
        (([np.zeros((2, 3))],), {"method": "mean"}, "unknown method 'mean'"),
    ],
)
def test_fuse_names_bad_input(args, options, message):
    with pytest.raises(ValueError, match=message):
        channels.fuse(*args, **options)


def test_the_mask_of_fuse_and_rrf_is_keyword_only():
    # fuse takes weights second and rrf took the mask second: neither takes a mask by position.
    A = np.arange(6, dtype=np.float32).reshape(2, 3)
    mask = np.ones((2, 3), dtype=bool)
    with pytest.raises(TypeError, match="positional"):
        channels.fuse([A, A], [1.0, 1.0], mask)
    with pytest.raises(TypeError, match="positional"):
        rrf([A, A], mask)
    np.testing.assert_array_equal(rrf([A, A], mask=mask), rrf([A, A]))


def test_channels_are_deterministic(tiny_task):
    task = long_task(tiny_task)
    runs = []
    for _ in range(2):
        Q, D, S, ctx, _ = direct_call(task, HashingEncoder(dim=32, two_views=True), POOLS)
        mask = candidate_mask(*S.shape, ctx.candidates)
        runs.append(
            channels.fuse(
                [
                    S,
                    channels.chunk_scores(Q, ctx, "paragraph", "topmean", mask),
                    channels.bm25_scores(ctx),
                    channels.view_scores(Q, ctx),
                    channels.prf_scores(Q, D, S, mask=mask),
                ],
                [1.0, 0.5, 0.5, 0.3, 0.3],
                mask=mask,
            )
        )
    np.testing.assert_array_equal(runs[0], runs[1])
