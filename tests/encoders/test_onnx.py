"""The onnx-int8 backend against the torch encoder on real SciFact passages, and its export cache.

One export per module (into a temporary cache): the int8 and fp32 encoders share it.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from itertools import islice
from pathlib import Path

import numpy as np
import pytest

from embedding_ttc.cli import build_parser, main
from embedding_ttc.encoders import catalog, onnx_export
from embedding_ttc.encoders.base import PASSAGE, QUERY, finish
from embedding_ttc.encoders.cache import CachedEncoder
from embedding_ttc.encoders.catalog import DEFAULT_ENCODER, load_encoder
from embedding_ttc.encoders.onnx import OnnxEncoder, OnnxInt8Encoder
from embedding_ttc.encoders.onnx_pipeline import pool
from embedding_ttc.errors import (
    EncoderUnavailableError,
    MissingExtraError,
    UnknownNameError,
)
from embedding_ttc.tasks.task import join_title_text

from fakes import HashingEncoder

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("onnxruntime") is None, reason="needs the onnx extra"
)


@pytest.fixture(scope="module")
def passages(shared_datasets: Path) -> list[str]:
    with (shared_datasets / "scifact" / "corpus.jsonl").open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in islice(fh, 50)]
    return [join_title_text(r.get("title", ""), r["text"]) for r in rows]


@pytest.fixture(scope="module")
def torch_encoder():
    return load_encoder(DEFAULT_ENCODER)


@pytest.fixture(scope="module")
def onnx_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Where $EMBEDDING_TTC_CACHE (set per test by conftest) puts exports, so the CLI test below
    # finds this module's export instead of making another.
    return tmp_path_factory.getbasetemp() / "cache" / "onnx"


@pytest.fixture(scope="module")
def int8(torch_encoder, onnx_root: Path) -> OnnxEncoder:
    encoder = OnnxInt8Encoder(torch_encoder, cache_dir=onnx_root, threads=2)
    encoder.load()  # exports once for the module
    return encoder


@pytest.fixture(scope="module")
def fp32(torch_encoder, onnx_root: Path, int8: OnnxEncoder) -> OnnxEncoder:
    return OnnxEncoder(torch_encoder, precision="fp32", cache_dir=onnx_root, threads=2)


@pytest.fixture(scope="module")
def reference(torch_encoder, passages: list[str]) -> np.ndarray:
    return torch_encoder.encode(passages, view=PASSAGE)


def test_int8_is_close_to_torch_on_real_passages(int8, reference, passages) -> None:
    got = int8.encode(passages, view=PASSAGE)
    assert got.shape == (50, 384) and got.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, rtol=1e-5)
    cos = np.sum(got * reference, axis=1)
    print(f"int8 vs torch on 50 SciFact passages: mean cos {cos.mean():.4f}, min {cos.min():.4f}")
    assert cos.mean() >= 0.99 and cos.min() >= 0.95


def test_fp32_export_reproduces_torch_pooling_and_normalisation(fp32, reference, passages):
    got = fp32.encode(passages, view=PASSAGE)
    print(f"fp32 vs torch: max |diff| {np.abs(got - reference).max():.2e}")
    np.testing.assert_allclose(got, reference, atol=1e-4)


def test_max_length_truncates_like_torch(fp32, torch_encoder, passages) -> None:
    short = fp32.encode(passages[:8], view=QUERY, max_length=16)
    np.testing.assert_allclose(
        short, torch_encoder.encode(passages[:8], view=QUERY, max_length=16), atol=1e-4
    )
    assert np.abs(short - fp32.encode(passages[:8], view=QUERY)).max() > 1e-2


def test_dim_truncates_then_renormalises(int8, passages) -> None:
    full = int8.encode(passages[:5], view=PASSAGE)
    half = int8.encode(passages[:5], view=PASSAGE, dim=192)
    np.testing.assert_allclose(half, finish(full, 192), atol=1e-6)
    assert int8.encode([], view=PASSAGE).shape == (0, 384)


def test_identity_differs_from_torch_so_cache_entries_do_not_mix(int8, torch_encoder) -> None:
    a, b = int8.info, torch_encoder.info
    assert a.name == "all-MiniLM-L6-v2@onnx-int8" and a.model_id != b.model_id
    assert a.revision.startswith(b.revision + "+onnx.") and a.revision != b.revision
    assert a.views == b.views and a.collapsed and a.dim == b.dim and a.max_length == b.max_length
    mine, theirs = CachedEncoder(int8, "/nonexistent"), CachedEncoder(torch_encoder, "/nonexistent")
    assert mine.dir != theirs.dir
    assert mine.key("a text", PASSAGE, None) != theirs.key("a text", PASSAGE, None)


def test_manifest_records_versions_and_hashes(int8) -> None:
    manifest = json.loads((int8.export_dir / "manifest.json").read_text())
    assert set(manifest["versions"]) == {"onnxruntime", "onnx", "torch", "transformers"}
    assert manifest["pooling"] == ["mean"] and manifest["normalize"] is True
    assert "model.safetensors" in manifest["sources"]
    assert set(manifest["artifacts"]) == {"model.fp32.onnx", "model.int8.onnx"}
    # the six feed-forward down-projections (1536 -> 384) stay fp32
    assert len(manifest["kept_fp32"]) == 6
    assert all("/output/dense/" in n and "attention" not in n for n in manifest["kept_fp32"])
    assert not list(int8.export_dir.parent.glob(".*"))  # no temporary folder left behind


def test_a_second_load_reuses_the_export(int8, torch_encoder, onnx_root, monkeypatch) -> None:
    manifest = int8.export_dir / "manifest.json"
    before = manifest.stat().st_mtime_ns

    def no_export(*args, **kwargs):
        raise AssertionError("re-exported a valid cached model")

    monkeypatch.setattr(onnx_export, "build_export", no_export)
    again = OnnxInt8Encoder(torch_encoder, cache_dir=onnx_root)
    assert again.export_dir == int8.export_dir
    np.testing.assert_allclose(
        again.encode(["reuse"], view=QUERY), int8.encode(["reuse"], view=QUERY), atol=1e-6
    )
    assert manifest.stat().st_mtime_ns == before


@pytest.mark.parametrize("damage", ["truncate", "no-manifest", "stale-source"])
def test_a_damaged_export_is_rebuilt_not_loaded(
    damage, int8, torch_encoder, tmp_path, monkeypatch
) -> None:
    good = int8.export_dir
    copy = tmp_path / good.name
    shutil.copytree(good, copy)
    if damage == "truncate":
        path = copy / "model.int8.onnx"
        path.write_bytes(path.read_bytes()[:1000])
    elif damage == "no-manifest":
        (copy / "manifest.json").unlink()
    else:
        manifest = json.loads((copy / "manifest.json").read_text())
        manifest["sources"]["model.safetensors"] = "0" * 64
        (copy / "manifest.json").write_text(json.dumps(manifest))
    builds: list[Path] = []

    def copy_good_export(pipeline, out, sources, versions):
        """A stand-in for the real export (which this module already ran once): copy it."""
        builds.append(out)
        for f in good.iterdir():
            shutil.copy2(f, out / f.name)

    monkeypatch.setattr(onnx_export, "build_export", copy_good_export)
    encoder = OnnxInt8Encoder(torch_encoder, cache_dir=tmp_path)
    assert encoder.export_dir == copy
    out = encoder.encode(["rebuilt"], view=QUERY)
    assert len(builds) == 1 and builds[0].parent == tmp_path and builds[0] != copy
    np.testing.assert_allclose(out, int8.encode(["rebuilt"], view=QUERY), atol=1e-6)
    assert (copy / "model.int8.onnx").read_bytes() == (good / "model.int8.onnx").read_bytes()
    assert not list(tmp_path.glob(".*"))  # no temporary or old folder left behind


def test_unknown_backend_names_the_valid_ones() -> None:
    with pytest.raises(UnknownNameError, match=r"'onnx-fp16'.*torch, onnx-int8"):
        load_encoder(DEFAULT_ENCODER, backend="onnx-fp16")
    with pytest.raises(UnknownNameError, match="torch, onnx-int8"):
        load_encoder(f"{DEFAULT_ENCODER}@tensorrt")


def test_name_suffix_selects_the_backend(int8) -> None:
    encoder = load_encoder(int8.info.name)  # the name round-trips
    assert isinstance(encoder, OnnxInt8Encoder) and encoder.info == int8.info


def test_other_encoders_say_the_backend_is_not_available() -> None:
    with pytest.raises(EncoderUnavailableError, match="backend 'onnx-int8' is not available"):
        OnnxInt8Encoder(HashingEncoder())


def test_a_packaged_non_transformer_encoder_is_refused() -> None:
    pytest.importorskip("static_model")
    with pytest.raises(EncoderUnavailableError, match="'tokenlearn-static-64'"):
        load_encoder("tokenlearn-static-64", backend="onnx-int8")


def test_missing_onnxruntime_names_the_extra(torch_encoder, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(MissingExtraError, match=r"pip install -e '\.\[onnx\]'") as err:
        OnnxInt8Encoder(torch_encoder)
    assert err.value.package == "onnxruntime" and err.value.extra == "onnx"


def test_pool_matches_hand_computed_values() -> None:
    hidden = np.array(
        [[[1.0, 2.0], [3.0, 4.0], [9.0, 9.0]], [[5.0, -1.0], [0.0, 0.0], [0.0, 0.0]]],
        dtype=np.float32,
    )
    mask = np.array([[1, 1, 0], [1, 0, 0]], dtype=np.int64)
    np.testing.assert_allclose(pool(hidden, mask, ["mean"]), [[2.0, 3.0], [5.0, -1.0]])
    np.testing.assert_allclose(pool(hidden, mask, ["cls"]), [[1.0, 2.0], [5.0, -1.0]])
    np.testing.assert_allclose(pool(hidden, mask, ["max"]), [[3.0, 4.0], [5.0, -1.0]])
    np.testing.assert_allclose(pool(hidden, mask, ["lasttoken"]), [[3.0, 4.0], [5.0, -1.0]])
    both = pool(hidden, mask, ["cls", "mean_sqrt_len_tokens"])
    np.testing.assert_allclose(both[0], [1.0, 2.0, 4.0 / np.sqrt(2), 6.0 / np.sqrt(2)])


def test_cli_passes_the_backend_to_load_encoder(packaged_datasets, capsys, monkeypatch) -> None:
    args = build_parser().parse_args(["bench", "--backend", "onnx-int8"])
    assert args.backend == "onnx-int8"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["evaluate", "--backend", "tensorrt"])
    calls = []

    def fake_load_encoder(name, backend="torch", device="auto"):
        calls.append((name, backend, device))
        return HashingEncoder()  # the plumbing is under test here, not the model

    monkeypatch.setattr(catalog, "load_encoder", fake_load_encoder)
    argv = ["evaluate", "--task", "aila_statutes", "--data-dir", str(packaged_datasets)]
    code = main([*argv, "--backend", "onnx-int8", "--no-cache", "--no-progress", "--json"])
    assert code == 0 and calls == [(DEFAULT_ENCODER, "onnx-int8", "auto")]
    (row,) = json.loads(capsys.readouterr().out)
    assert row["encoder"] == "all-MiniLM-L6-v2@onnx-int8" and row["program"] == "P0"
