"""Durable folders: staged beside their target, published whole, checksummed, locked.

A folder that must appear whole (a deployed index, an ONNX export, an extracted model) is
written into a temporary folder beside its target (:func:`staging_dir`, ``.NAME.tmp-*``) and
moved into place by :func:`publish_dir`: a rename when the target is new; when it replaces an
old version, an atomic swap (``renameat2(RENAME_EXCHANGE)`` where Linux offers it, else two
renames). An interrupted writer leaves nothing a reader would take for the folder.

:func:`checksums` records every file's size and SHA-256 (:class:`FileEntry`); :func:`check_files`
checks them back on load. :func:`file_lock` serialises the writers of one target.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import secrets
import shutil
import sys
import tempfile
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from embedding_ttc.durable.files import fsync_dir, sha256_file


class FileEntry(BaseModel):
    """A file's size in bytes and SHA-256 (hex)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bytes: int
    sha256: str


def file_lock(path: Path) -> Any:
    """An inter-process lock on the lock file ``<path>.lock`` (its folder is created)."""
    from filelock import FileLock

    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(path) + ".lock")


@contextlib.contextmanager
def staging_dir(out: Path) -> Iterator[Path]:
    """A temporary folder beside ``out``, removed unless it was moved into place."""
    out.parent.mkdir(parents=True, exist_ok=True)
    while True:  # mkdir, not mkdtemp: the folder gets the umask's permissions, not 0700
        tmp = out.parent / f".{out.name}.tmp-{secrets.token_hex(6)}"
        try:
            tmp.mkdir()
            break
        except FileExistsError:
            continue
    try:
        yield tmp
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def publish_dir(staging: Path, out: Path) -> None:
    """Move the finished folder ``staging`` to ``out``, replacing (swapping) any old one.

    The files in ``staging`` must already be durable; the renames are made durable here.
    """
    fsync_dir(staging)
    if not out.exists():
        os.rename(staging, out)
    elif exchange(staging, out):
        shutil.rmtree(staging)  # it now holds the old version
    else:
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
        os.rename(out, old / out.name)
        os.rename(staging, out)
        shutil.rmtree(old)
    fsync_dir(out.parent)


def exchange(a: Path, b: Path) -> bool:
    """Atomically swap two directories (Linux ``renameat2``); False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def link_or_copy(src: Path, dst: Path) -> None:
    """Hard-link an unchanged file into a new version (published files are never modified)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def checksums(root: Path, skip: Collection[str] = ()) -> dict[str, FileEntry]:
    """Every file below ``root`` but those in ``skip`` (relative POSIX paths), sorted."""
    out = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        if rel not in skip:
            out[rel] = FileEntry(bytes=path.stat().st_size, sha256=sha256_file(path))
    return out


def check_files(
    root: Path,
    files: Mapping[str, FileEntry],
    *,
    verify: bool,
    error: type[Exception],
    what: str,
    remedy: str,
) -> None:
    """Check that each file of ``files`` is there with its size (and, with ``verify``, hash).

    Args:
        root: the folder the paths are relative to.
        files: the recorded entries.
        verify: also compare every file's SHA-256 (reads every byte).
        error: raised on the first mismatch.
        what: what a file is called in the message (``index file``).
        remedy: what to do about a mismatch (``rebuild the index``).

    """
    for rel, entry in files.items():
        path = root / rel
        if not path.is_file():
            raise error(f"{what} {path} is missing")
        size = path.stat().st_size
        if size != entry.bytes:
            raise error(
                f"{what} {path} is {size} bytes, the manifest says {entry.bytes} "
                f"(truncated or modified; {remedy})"
            )
        if verify and sha256_file(path) != entry.sha256:
            raise error(
                f"{what} {path} does not match its SHA-256 in the manifest "
                f"(corrupted or modified; {remedy})"
            )
