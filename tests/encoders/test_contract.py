"""Contract test over the whole encoder registry: every encoder that runs here honours the protocol.

Encoders that need the network are checked for their declared views and for a clear error when
the hub cannot be reached.
"""

import numpy as np
import pytest

from embedding_ttc.encoders.base import VIEWS
from embedding_ttc.encoders.catalog import ENCODERS, available_specs, load_encoder
from embedding_ttc.errors import EncoderUnavailableError

TEXTS = ["The cat sat on the mat.", "Interest rates rose again in March.", ""]
RUNNABLE = [s.name for s in available_specs()]
ONLINE = [n for n in ENCODERS if not ENCODERS.get(n).offline]


@pytest.fixture(scope="module", params=RUNNABLE)
def encoder(request):
    return load_encoder(request.param)


def test_the_default_and_a_two_view_encoder_run_here():
    assert "all-MiniLM-L6-v2" in RUNNABLE
    assert any(not ENCODERS.get(n).collapsed for n in RUNNABLE)


def test_encode_contract(encoder):
    spec = ENCODERS.get(encoder.info.name)
    assert set(encoder.info.views) == set(VIEWS) and encoder.info.dim == spec.dim
    for view in VIEWS:
        out = encoder.encode(TEXTS, view=view)
        assert out.shape == (3, spec.dim) and out.dtype == np.float32
        assert np.all(np.isfinite(out))
        norms = np.linalg.norm(out[:2], axis=1)
        np.testing.assert_allclose(norms, 1.0, rtol=1e-4)
    again = encoder.encode(TEXTS, view=VIEWS[0])
    np.testing.assert_array_equal(again, encoder.encode(TEXTS, view=VIEWS[0]))
    half = encoder.encode(TEXTS[:2], view=VIEWS[0], dim=spec.dim // 2)
    assert half.shape == (2, spec.dim // 2)
    np.testing.assert_allclose(np.linalg.norm(half, axis=1), 1.0, rtol=1e-4)
    assert encoder.encode([], view=VIEWS[1]).shape == (0, spec.dim)


def test_related_texts_are_closer(encoder):
    q = encoder.encode(["How do cats behave on mats?"], view="retrieval.query")
    d = encoder.encode(TEXTS[:2], view="retrieval.passage")
    sims = (q @ d.T)[0]
    assert sims[0] > sims[1]


@pytest.mark.parametrize("name", ONLINE)
def test_online_encoders_declare_views_and_fail_clearly_offline(name, monkeypatch):
    spec = ENCODERS.get(name)
    assert set(spec.views) == set(VIEWS)
    if name == "jina-embeddings-v3":
        assert {v.kind for v in spec.views.values()} == {"adapter"}
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    encoder = load_encoder(name)
    with pytest.raises(EncoderUnavailableError, match="need network access"):
        encoder.encode(["hello"], view="retrieval.query")
