import multiprocessing as mp
from pathlib import Path

import numpy as np
import pytest

from embedding_ttc.encoders.cache import CachedEncoder
from embedding_ttc.encoders.meter import Meter, MeteredEncoder

from fakes import HashingEncoder

TEXTS = [f"text number {i} about topic {i % 3}" for i in range(20)]


def test_hit_runs_no_forward_pass_but_counts_as_a_call(tmp_path: Path):
    inner = HashingEncoder(dim=16)
    cold = CachedEncoder(inner, tmp_path).encode(TEXTS, view="retrieval.passage")
    assert inner.calls == [20]
    meter = Meter()
    warm_enc = MeteredEncoder(CachedEncoder(inner, tmp_path), meter)
    warm = warm_enc.encode(TEXTS, view="retrieval.passage")
    assert inner.calls == [20]  # no new forward pass
    assert meter.snapshot().total() == 20  # still 20 logical encoder calls
    np.testing.assert_array_equal(cold, warm)
    np.testing.assert_array_equal(warm, inner.encode(TEXTS, view="retrieval.passage"))


def test_key_covers_view_max_length_and_model(tmp_path: Path):
    inner = HashingEncoder(dim=16, two_views=True)
    cache = CachedEncoder(inner, tmp_path)
    keys = {
        cache.key("x", "retrieval.query", None),
        cache.key("x", "retrieval.passage", None),
        cache.key("x", "retrieval.query", 8),
        CachedEncoder(HashingEncoder(dim=16, seed=1), tmp_path).key("x", "retrieval.query", None),
    }
    assert len(keys) == 4
    cache.encode(["x"], view="retrieval.query")
    cache.encode(["x"], view="retrieval.passage")
    assert inner.calls == [1, 1]


def test_dim_is_applied_after_lookup(tmp_path: Path):
    inner = HashingEncoder(dim=16)
    cache = CachedEncoder(inner, tmp_path)
    cache.encode(TEXTS, view="retrieval.query")
    small = cache.encode(TEXTS, view="retrieval.query", dim=4)
    assert inner.calls == [20] and small.shape == (20, 4)
    np.testing.assert_allclose(small, inner.encode(TEXTS, view="retrieval.query", dim=4), atol=1e-6)


def test_corrupted_and_partial_entries_are_recomputed(tmp_path: Path):
    inner = HashingEncoder(dim=16)
    cache = CachedEncoder(inner, tmp_path)
    good = cache.encode(TEXTS[:3], view="retrieval.query")
    files = sorted(cache.dir.rglob("*.emb"))
    assert len(files) == 3
    blob = bytearray(files[0].read_bytes())
    blob[20] ^= 0xFF  # flip a payload byte
    files[0].write_bytes(bytes(blob))
    files[1].write_bytes(files[1].read_bytes()[:30])  # truncated write
    files[2].write_bytes(files[2].read_bytes() + b"\0")  # a whole entry and a byte more
    again = CachedEncoder(inner, tmp_path)
    out = again.encode(TEXTS[:3], view="retrieval.query")
    np.testing.assert_array_equal(out, good)
    assert again.stats.corrupt == 3 and again.stats.misses == 3 and again.stats.hits == 0
    assert CachedEncoder(inner, tmp_path).encode(TEXTS[:3], view="retrieval.query").shape == (3, 16)


def _worker(root: str) -> bytes:
    enc = CachedEncoder(HashingEncoder(dim=16), root)
    return enc.encode(TEXTS, view="retrieval.query").tobytes()


def test_two_processes_share_a_cache(tmp_path: Path):
    ctx = mp.get_context("spawn")
    with ctx.Pool(2) as pool:
        outs = pool.map(_worker, [str(tmp_path)] * 4)
    assert len(set(outs)) == 1
    assert {p.suffix for p in tmp_path.rglob("*") if p.is_file()} == {".emb"}  # no temporary
    final = CachedEncoder(HashingEncoder(dim=16), tmp_path)
    assert final.encode(TEXTS, view="retrieval.query").tobytes() == outs[0]
    assert final.stats.hits == 20


def test_views_with_the_same_realisation_share_entries(tmp_path: Path):
    inner = HashingEncoder(dim=16)  # one shared encoding: every view is the same
    enc = CachedEncoder(inner, tmp_path)
    first = enc.encode(["a", "b"], view="retrieval.passage")
    again = enc.encode(["a", "b"], view="text-matching")
    np.testing.assert_array_equal(first, again)
    assert enc.stats.misses == 2 and enc.stats.hits == 2


def test_views_with_different_prompts_do_not_share(tmp_path: Path):
    enc = CachedEncoder(HashingEncoder(dim=16, two_views=True), tmp_path)
    enc.encode(["a"], view="retrieval.passage")
    enc.encode(["a"], view="retrieval.query")  # "query: " prompt: a different encoding
    enc.encode(["a"], view="text-matching")  # same prompt as the query view: a hit
    assert enc.stats.misses == 2 and enc.stats.hits == 1


class _Interrupting:
    """Wraps an encoder and raises KeyboardInterrupt on its ``n``-th call."""

    def __init__(self, inner, n: int) -> None:
        self.inner, self.n, self.calls = inner, n, 0
        self.info = inner.info

    def encode(self, texts, view="retrieval.passage", dim=None, max_length=None):
        self.calls += 1
        if self.calls == self.n:
            raise KeyboardInterrupt
        return self.inner.encode(texts, view=view, dim=dim, max_length=max_length)


def test_misses_are_stored_a_block_at_a_time_so_an_interruption_keeps_finished_blocks(tmp_path):
    inner = HashingEncoder(dim=16)
    flaky = _Interrupting(inner, n=3)
    cache = CachedEncoder(flaky, tmp_path, block_size=8)
    with pytest.raises(KeyboardInterrupt):
        cache.encode(TEXTS, view="retrieval.passage")  # 20 misses: blocks of 8, 8, 4
    assert inner.calls == [8, 8]
    resumed = CachedEncoder(inner, tmp_path, block_size=8)
    out = resumed.encode(TEXTS, view="retrieval.passage")
    assert inner.calls == [8, 8, 4]  # only the block that was cut off is encoded again
    assert resumed.stats.hits == 16 and resumed.stats.misses == 4
    np.testing.assert_array_equal(out, inner.encode(TEXTS, view="retrieval.passage"))
    with pytest.raises(ValueError, match="block_size"):
        CachedEncoder(inner, tmp_path, block_size=0)
