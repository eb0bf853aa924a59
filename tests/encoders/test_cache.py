import multiprocessing as mp
import pickle
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from embedding_ttc.encoders.cache import CachedEncoder
from embedding_ttc.encoders.cache_store import STORE_NAME, CacheStore
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


def test_corrupted_and_partial_rows_are_recomputed(tmp_path: Path):
    inner = HashingEncoder(dim=16)
    cache = CachedEncoder(inner, tmp_path)
    good = cache.encode(TEXTS[:3], view="retrieval.query")
    db = cache.dir / STORE_NAME
    with sqlite3.connect(db) as conn:
        keys = [k for (k,) in conn.execute("SELECT key FROM entries ORDER BY key")]
        assert len(keys) == 3
        vec = conn.execute("SELECT vec FROM entries WHERE key = ?", (keys[0],)).fetchone()[0]
        flipped = bytes([vec[0] ^ 0xFF]) + vec[1:]  # a flipped payload byte: digest mismatch
        conn.execute("UPDATE entries SET vec = ? WHERE key = ?", (flipped, keys[0]))
        conn.execute("UPDATE entries SET vec = substr(vec, 1, 30) WHERE key = ?", (keys[1],))
        conn.execute("UPDATE entries SET vec = vec || x'00000000' WHERE key = ?", (keys[2],))
    again = CachedEncoder(inner, tmp_path)
    out = again.encode(TEXTS[:3], view="retrieval.query")
    np.testing.assert_array_equal(out, good)
    assert again.stats.corrupt == 3 and again.stats.misses == 3 and again.stats.hits == 0
    final = CachedEncoder(inner, tmp_path)  # the rows were overwritten: whole hits now
    np.testing.assert_array_equal(final.encode(TEXTS[:3], view="retrieval.query"), good)
    assert final.stats.hits == 3 and final.stats.corrupt == 0
    assert len(final.store) == 3


def test_a_row_of_another_dimension_is_a_miss(tmp_path: Path):
    wide = CachedEncoder(HashingEncoder(dim=16), tmp_path)
    wide.encode(TEXTS[:2], view="retrieval.query")
    narrow = CachedEncoder(HashingEncoder(dim=8), tmp_path)  # same model id and revision
    out = narrow.encode(TEXTS[:2], view="retrieval.query")
    assert out.shape == (2, 8) and narrow.stats.corrupt == 2 and narrow.stats.misses == 2
    assert narrow.store.meta()["dim"] == "8"


def _worker(root: str) -> bytes:
    enc = CachedEncoder(HashingEncoder(dim=16), root)
    return enc.encode(TEXTS, view="retrieval.query").tobytes()


def test_two_processes_share_a_cache(tmp_path: Path):
    ctx = mp.get_context("spawn")
    with ctx.Pool(2) as pool:
        outs = pool.map(_worker, [str(tmp_path)] * 4)
    assert len(set(outs)) == 1
    final = CachedEncoder(HashingEncoder(dim=16), tmp_path)
    assert final.encode(TEXTS, view="retrieval.query").tobytes() == outs[0]
    assert final.stats.hits == 20
    assert {p.name for p in final.dir.iterdir()} <= {
        STORE_NAME,
        f"{STORE_NAME}-wal",
        f"{STORE_NAME}-shm",
    }


MANY = [f"document {i} on subject {i % 17} and {i % 5}" for i in range(600)]


def _writer(root: str, offset: int, rounds: int) -> int:
    """Encode overlapping slices one small block per transaction, re-reading as it goes."""
    inner = HashingEncoder(dim=32)
    enc = CachedEncoder(inner, root, block_size=3)
    for r in range(rounds):
        lo = (offset + 37 * r) % len(MANY)
        texts = (MANY + MANY)[lo : lo + 60]
        out = enc.encode(texts, view="retrieval.passage")
        if not np.array_equal(out, inner.encode(texts, view="retrieval.passage")):
            return -1
    return enc.stats.misses


def test_processes_writing_and_reading_one_database_at_once(tmp_path: Path):
    ctx = mp.get_context("spawn")
    with ctx.Pool(3) as pool:
        misses = pool.starmap(_writer, [(str(tmp_path), o, 12) for o in (0, 200, 400)])
    assert -1 not in misses  # every process read back exactly what was encoded
    written = set()
    for offset in (0, 200, 400):
        for r in range(12):
            lo = (offset + 37 * r) % len(MANY)
            written.update((MANY + MANY)[lo : lo + 60])
    final = CachedEncoder(HashingEncoder(dim=32), tmp_path)
    assert len(final.store) == len(written)  # one row per text: no duplicate, none lost
    assert sum(misses) >= len(written)  # overlapping misses in two processes both count
    texts = sorted(written)
    out = final.encode(texts, view="retrieval.passage")
    assert final.stats.hits == len(texts) and final.stats.misses == 0
    np.testing.assert_array_equal(
        out, HashingEncoder(dim=32).encode(texts, view="retrieval.passage")
    )


def _encode_with(enc: CachedEncoder) -> tuple[bytes, int]:
    return enc.encode(TEXTS, view="retrieval.query").tobytes(), enc.stats.hits


def test_an_encoder_in_use_can_be_sent_to_another_process(tmp_path: Path):
    enc = CachedEncoder(HashingEncoder(dim=16), tmp_path)
    first = enc.encode(TEXTS, view="retrieval.query")  # the connection is open now
    sent = pickle.loads(pickle.dumps(enc))
    assert sent.store.path == enc.store.path
    with mp.get_context("spawn").Pool(1) as pool:
        out, hits = pool.apply(_encode_with, (enc,))
    assert out == first.tobytes() and hits >= 20


def test_the_database_takes_little_more_than_its_vectors(tmp_path: Path):
    store = CacheStore(tmp_path / STORE_NAME)
    rng = np.random.default_rng(0)
    for _ in range(4):  # random keys, written a block per transaction as encoders do
        keys = [rng.bytes(32) for _ in range(1000)]
        store.put(keys, rng.standard_normal((1000, 384)).astype(np.float32), "retrieval.passage")
    store.checkpoint()
    summary = store.summary()
    assert summary.entries == 4000 and summary.vector_bytes == 4000 * 384 * 4
    assert summary.ratio < 1.2, summary


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


class _Clock:
    """A fake clock; :class:`_Slow` advances it as it encodes."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class _Slow:
    """Wraps an encoder and advances a fake clock as a slow encoder would take time."""

    def __init__(self, inner, clock: _Clock, seconds_per_text: float) -> None:
        self.inner, self.clock, self.seconds_per_text = inner, clock, seconds_per_text
        self.info = inner.info

    def encode(self, texts, view="retrieval.passage", dim=None, max_length=None):
        self.clock.now += self.seconds_per_text * len(texts)
        return self.inner.encode(texts, view=view, dim=dim, max_length=max_length)


def test_blocks_are_sized_to_the_encoders_rate_so_a_slow_encoder_stores_its_work_often(tmp_path):
    texts = [f"passage {i}" for i in range(400)]
    inner = HashingEncoder(dim=16)
    clock = _Clock()
    slow = CachedEncoder(_Slow(inner, clock, 0.4), tmp_path / "slow", block_seconds=10, clock=clock)
    out = slow.encode(texts, view="retrieval.passage")
    # 64 texts first, then 25 a block: 2.5 texts a second for 10 seconds.
    assert inner.calls == [64] + [25] * 13 + [11]
    np.testing.assert_array_equal(out, inner.encode(texts, view="retrieval.passage"))
    # A fast encoder's blocks grow to block_size after the first one.
    inner = HashingEncoder(dim=16)
    fast = CachedEncoder(
        _Slow(inner, _Clock(), 0.0), tmp_path / "fast", block_size=100, clock=_Clock()
    )
    fast.encode(texts, view="retrieval.passage")
    assert inner.calls == [64, 100, 100, 100, 36]
    with pytest.raises(ValueError, match="block_seconds"):
        CachedEncoder(inner, tmp_path, block_seconds=0)


def test_the_rate_carries_over_to_the_next_call(tmp_path):
    inner = HashingEncoder(dim=16)
    clock = _Clock()
    cache = CachedEncoder(_Slow(inner, clock, 1.0), tmp_path, block_seconds=5, clock=clock)
    cache.encode(TEXTS[:3], view="retrieval.passage")  # 3 texts in 3 s: 1 text a second
    assert cache.next_block() == 5
    cache.encode(TEXTS[3:], view="retrieval.passage")
    assert inner.calls == [3, 5, 5, 5, 2]
