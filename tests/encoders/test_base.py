import numpy as np
import pytest

from embedding_ttc.encoders.base import QUERY, VIEWS, finish
from embedding_ttc.errors import UnknownNameError

from fakes import HashingEncoder


def test_finish_truncates_then_renormalises():
    raw = np.array([[3.0, 4.0, 12.0], [0.0, 0.0, 0.0]])
    out = finish(raw, dim=2)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out[0], [0.6, 0.8], rtol=1e-6)
    np.testing.assert_array_equal(out[1], [0.0, 0.0])  # a zero row stays finite


def test_encode_contract_on_the_fake():
    enc = HashingEncoder(dim=16)
    out = enc.encode(["a b c", "d e"], view=QUERY)
    assert out.shape == (2, 16) and out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-6)
    small = enc.encode(["a b c"], view=QUERY, dim=4)
    np.testing.assert_allclose(small[0], finish(out[:1, :4])[0], rtol=1e-5)
    assert enc.encode([], view=QUERY).shape == (0, 16)


def test_bad_arguments_are_named():
    enc = HashingEncoder(dim=8)
    with pytest.raises(UnknownNameError, match=r"Did you mean 'retrieval\.query'"):
        enc.encode(["x"], view="retrieval.qeury")
    with pytest.raises(ValueError, match="dim must be"):
        enc.encode(["x"], view=QUERY, dim=9)
    with pytest.raises(ValueError, match="max_length"):
        enc.encode(["x"], view=QUERY, max_length=0)
    with pytest.raises(TypeError):
        enc.encode("x", view=QUERY)


def test_prompt_views_differ_and_collapsed_views_do_not():
    one = HashingEncoder(dim=8)
    assert one.info.collapsed
    assert len({one.encode(["hello world"], view=v).tobytes() for v in VIEWS}) == 1
    two = HashingEncoder(dim=8, two_views=True)
    assert not two.info.collapsed and two.info.distinct_views == 2
    q = two.encode(["hello world"], view="retrieval.query")
    p = two.encode(["hello world"], view="retrieval.passage")
    assert not np.allclose(q, p)
