"""A call cut into Ray tasks gives the in-process rows bit for bit; a sharded build, the same index.

The plan tests need nothing; the batching tests load the packaged MiniLM; the Ray tests share
one local Ray for the module (``ray_session`` leaves an initialised Ray alone), and build the
same corpus in process and with ``--executor ray`` in this one process (BM25's files depend on
the process's string hashing, so two processes would differ there, whatever the encoder).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import numpy as np
import pytest

from embedding_ttc.cli import main
from embedding_ttc.encoders.base import PASSAGE, QUERY
from embedding_ttc.encoders.cache import CachedEncoder
from embedding_ttc.encoders.catalog import load_encoder
from embedding_ttc.encoders.named import NamedEncoder
from embedding_ttc.encoders.sharded import (
    ShardedEncoder,
    encode_shard,
    plan_shards,
    shard_cpus,
    task_threads,
)
from embedding_ttc.encoders.threads import set_torch_threads, torch_threads
from embedding_ttc.errors import EncoderUnavailableError
from embedding_ttc.executors import InProcessExecutor, RayExecutor

from fakes import HashingEncoder

MINILM = "all-MiniLM-L6-v2"
STATIC = "tokenlearn-static-64"
SENTENCE = (
    "the court held that a statute of limitation applies to every claim brought under the act "
    "while a bishop moves diagonally and a knight jumps over pieces in an opening gambit"
)
WORDS = SENTENCE.split()


def _texts(n: int, seed: int = 0) -> list[str]:
    """``n`` texts of 1 to 60 words (lengths vary, so batches pad differently)."""
    rng = random.Random(seed)
    return [" ".join(rng.choices(WORDS, k=rng.randint(1, 60))) for _ in range(n)]


class Batches:
    """A fake plan: an encoder that declares fixed forward batches."""

    def __init__(self, groups: list[list[int]]) -> None:
        self.groups = groups

    def forward_batches(self, texts, view):
        return self.groups


class Independent:
    independent_rows = True


# --- plans -----------------------------------------------------------------------------------


def test_shards_keep_declared_batches_whole():
    plan = Batches([[4, 0, 2], [1, 3], [5], [6, 7, 8, 9]])
    texts = [str(i) for i in range(10)]
    assert plan_shards(plan, texts, PASSAGE, 5) == [[[4, 0, 2], [1, 3]], [[5], [6, 7, 8, 9]]]
    # A batch larger than the shard size is a shard alone, never split.
    assert plan_shards(plan, texts, PASSAGE, 2) == [[[4, 0, 2]], [[1, 3]], [[5]], [[6, 7, 8, 9]]]


def test_independent_rows_are_cut_anywhere_and_others_not_at_all():
    texts = [str(i) for i in range(7)]
    assert plan_shards(Independent(), texts, PASSAGE, 3) == [[[0, 1, 2]], [[3, 4, 5]], [[6]]]
    assert plan_shards(HashingEncoder(), texts, PASSAGE, 3) == [[list(range(7))]]
    assert plan_shards(HashingEncoder(), [], PASSAGE, 3) == []
    with pytest.raises(ValueError, match="at least 1"):
        plan_shards(Independent(), texts, PASSAGE, 0)


# --- the sentence-transformers batching, without Ray ----------------------------------------


def test_minilm_batches_encoded_one_call_each_give_the_in_process_rows():
    encoder = load_encoder(MINILM, device="cpu")
    texts = _texts(90)
    whole = encoder.encode(texts, view=PASSAGE)
    groups = encoder.forward_batches(texts, PASSAGE)
    assert sorted(i for g in groups for i in g) == list(range(90))
    assert [len(g) for g in groups] == [32, 32, 26]
    rows = np.empty_like(whole)
    for g in groups:
        rows[g] = encoder.encode([texts[i] for i in g], view=PASSAGE)
    assert np.array_equal(rows, whole)
    # Why the batches matter: the same texts cut into other batches pad differently, and
    # MiniLM's rows move in their last bits.
    halves = np.concatenate(
        [encoder.encode(texts[:45], view=PASSAGE), encoder.encode(texts[45:], view=PASSAGE)]
    )
    assert not np.array_equal(halves, whole)
    assert np.allclose(halves, whole, atol=1e-5)


def test_a_task_encodes_with_the_threads_it_is_given():
    torch = pytest.importorskip("torch")
    # Why: a three-query batch's rows depend on the thread count on some CPUs (MKL), so a
    # task must run with the driver's threads to give the driver's rows.
    driver = torch.get_num_threads()
    assert task_threads() == driver and task_threads(3) == 3
    with pytest.raises(ValueError, match="at least 1"):
        task_threads(0)
    with pytest.raises(ValueError, match="at least 1"):
        set_torch_threads(0)
    assert torch_threads() == driver
    named = NamedEncoder(MINILM, use_cache=False, device="cpu")
    local = load_encoder(MINILM, device="cpu")
    texts = _texts(3, seed=4)
    try:
        encode_shard(named, [texts], QUERY, None, None, 1)
        assert torch.get_num_threads() == 1
        again = encode_shard(named, [texts], QUERY, None, None, driver)
        assert torch.get_num_threads() == driver
        assert np.array_equal(again, local.encode(texts, view=QUERY))
    finally:
        torch.set_num_threads(driver)


def test_shards_run_in_process_give_the_in_process_rows():
    local = load_encoder(STATIC, device="cpu")
    named = NamedEncoder(STATIC, use_cache=False, device="cpu")
    sharded = ShardedEncoder(InProcessExecutor(), named, load_encoder(STATIC, device="cpu"), 40)
    texts = _texts(100, seed=1)
    assert np.array_equal(sharded.encode(texts, view=PASSAGE), local.encode(texts, view=PASSAGE))
    assert sharded.tasks == 3


# --- Ray -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ray():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.mark.ray
@pytest.mark.parametrize(
    "name",
    [pytest.param(MINILM, marks=pytest.mark.slow), STATIC],  # MiniLM: about a minute
)
def test_sharded_rows_equal_in_process_rows(ray, name, tmp_path):
    local = load_encoder(name, device="cpu")
    named = NamedEncoder(name, use_cache=False, device="cpu")
    executor = RayExecutor(cpus_per_job=shard_cpus(ray, task_threads()))
    sharded = ShardedEncoder(executor, named, load_encoder(name, device="cpu"), shard_size=40)
    texts = _texts(100, seed=1)
    for view, dim in ((PASSAGE, None), (QUERY, 32)):
        assert np.array_equal(
            sharded.encode(texts, view=view, dim=dim), local.encode(texts, view=view, dim=dim)
        )
    assert sharded.tasks == 2 * 3  # 100 texts, 40 a shard (MiniLM: 32 + 32 | 32 | 4)
    assert sharded.threads == task_threads() and executor.cpus_per_job <= 2
    assert sharded.encode([], view=PASSAGE).shape == (0, local.info.dim)


@pytest.mark.ray
def test_cache_hits_never_leave_the_driver(ray, tmp_path):
    named = NamedEncoder(STATIC, use_cache=False)
    sharded = ShardedEncoder(RayExecutor(), named, load_encoder(STATIC, device="cpu"), 10)
    cached = CachedEncoder(sharded, tmp_path / "cache")
    texts = _texts(30, seed=2)
    first = cached.encode(texts, view=PASSAGE)
    assert sharded.tasks == 3
    again = cached.encode([*texts, "one new text"], view=PASSAGE)
    assert sharded.tasks == 4  # only the miss travelled
    assert np.array_equal(again[:30], first)


@pytest.mark.ray
def test_a_failed_task_names_the_shard(ray):
    # The driver plans on the CPU; the workers are asked for a GPU this machine lacks.
    named = NamedEncoder(STATIC, use_cache=False, device="cuda:7")
    sharded = ShardedEncoder(RayExecutor(), named, load_encoder(STATIC, device="cpu"), 10)
    with pytest.raises(EncoderUnavailableError, match=r"Ray could not encode shard \d of 2 "):
        sharded.encode(_texts(20), view=PASSAGE)


def _corpus(path: Path) -> Path:
    rng = random.Random(3)
    with path.open("w") as f:
        for i in range(60):
            sentences = ". ".join(
                " ".join(rng.choices(WORDS, k=rng.randint(2, 25))) for _ in range(rng.randint(1, 4))
            )
            f.write(json.dumps({"_id": f"d{i}", "title": "", "text": sentences}) + "\n")
    return path


def _files(index: Path) -> dict[str, object]:
    """Every file of the index (index-level and each segment's), with its size and SHA-256."""
    manifest = json.loads((index / "manifest.json").read_text())
    files = dict(manifest["files"])
    for segment in manifest["segments"]:
        files.update({f"{segment['name']}/{k}": v for k, v in segment["files"].items()})
    return files


@pytest.mark.ray
@pytest.mark.parametrize("name", [MINILM, STATIC])
def test_ray_build_writes_the_in_process_index(ray, name, tmp_path, capsys):
    corpus = _corpus(tmp_path / "corpus.jsonl")
    common = [
        "index",
        "build",
        "--program",
        "SentMaxSim",
        "--corpus",
        str(corpus),
        "--encoder",
        name,
        "--no-progress",
        "--device",
        "cpu",
    ]
    # Separate caches: the sharded build encodes everything through Ray.
    assert main([*common, "--out", str(tmp_path / "a"), "--cache-dir", str(tmp_path / "c1")]) == 0
    ray_flags = ["--executor", "ray", "--shard-size", "16", "--cache-dir", str(tmp_path / "c2")]
    assert main([*common, "--out", str(tmp_path / "b"), *ray_flags]) == 0
    capsys.readouterr()
    a, b = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert any("/store/" in f for f in a)  # sentence embeddings went through Ray too
    assert a == b
    assert ray.is_initialized()  # the command left the test's Ray alone


@pytest.mark.ray
def test_ray_build_failure_leaves_nothing(ray, tmp_path, capsys):
    corpus = _corpus(tmp_path / "corpus.jsonl")
    argv = [
        "index",
        "build",
        "--corpus",
        str(corpus),
        "--encoder",
        STATIC,
        "--out",
        str(tmp_path / "ix"),
        "--no-progress",
        "--executor",
        "ray",
        "--device",
        "cuda:7",
        "--no-cache",
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Ray could not encode shard" in err and "cuda:7" in err
    assert not (tmp_path / "ix").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["corpus.jsonl"]


def test_executor_flags_are_checked_before_loading(tmp_path, monkeypatch, capsys):
    base = [
        "index",
        "build",
        "--corpus",
        str(tmp_path / "none.jsonl"),
        "--out",
        str(tmp_path / "ix"),
    ]
    assert main([*base, "--executor", "rey"]) == 2
    assert "Did you mean: ray?" in capsys.readouterr().err
    assert main([*base, "--ray-address", "ray://head:10001"]) == 2
    assert "--ray-address is for --executor ray" in capsys.readouterr().err
    assert main([*base, "--executor", "ray", "--shard-size", "0"]) == 2
    assert "--shard-size must be at least 1" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "ray", None)  # makes `import ray` fail
    assert main([*base, "--executor", "ray"]) == 2
    assert "pip install -e '.[ray]'" in capsys.readouterr().err
