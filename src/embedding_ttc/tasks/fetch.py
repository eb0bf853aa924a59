"""Install a BEIR dataset from its archive: download, check, extract, publish whole.

:func:`fetch_beir` takes a dataset through four steps, each of which can fail without leaving
anything a reader would take for the dataset:

1. **download** the archive into ``DIR/.<name>-<url hash>.zip.part``, resumable
   (:mod:`embedding_ttc.tasks.download`), or take a local file the user gives;
2. **check** its MD5 against the published one (:mod:`embedding_ttc.tasks.beir_archives`)
   before anything is extracted. A mismatch is an error; a downloaded archive is then moved
   aside to ``DIR/.<name>.zip.rejected`` (so the next run starts afresh) and nothing is
   installed. An archive of a name with no published checksum is installed with its SHA-256
   recorded and a warning;
3. **extract** it into a staging folder beside the target (``DIR/.<name>.tmp-*``), accepting
   the BEIR layout (``corpus.jsonl``, ``queries.jsonl``, ``qrels/test.tsv``) at the archive's
   top or in its one top folder, and write ``FETCH.json`` (:class:`FetchRecord`) there;
4. **publish** the folder as ``DIR/<name>`` with one rename.

A complete ``DIR/<name>`` is left alone unless ``force``; with ``force`` the new folder
replaces it in one atomic swap. Two fetches of one name are serialised by a lock file.
"""

from __future__ import annotations

import hashlib
import os
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict

from embedding_ttc.durable import file_lock, fsync_tree, publish_dir, staging_dir, write_atomic
from embedding_ttc.errors import DatasetError, UnknownNameError
from embedding_ttc.registry import Registry
from embedding_ttc.tasks.beir import find_file
from embedding_ttc.tasks.beir_archives import ARCHIVES, BeirArchive, archive_url
from embedding_ttc.tasks.catalog import DATA_ENV, find_data_root, user_data_dir
from embedding_ttc.tasks.download import Digests, UnreachableError, digests, download

__all__ = [
    "RECORD_FILE",
    "FetchRecord",
    "FetchResult",
    "default_fetch_dir",
    "fetch_beir",
    "is_complete_task_folder",
]

Progress = Callable[[str, int, int], None]
RECORD_FILE = "FETCH.json"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def default_fetch_dir() -> Path:
    """Where fetched datasets go: under the data root the other commands read.

    ``$EMBEDDING_TTC_DATA`` if set (created if need be), else the data root in effect
    (:func:`~embedding_ttc.tasks.catalog.find_data_root`), else :func:`user_data_dir`; so a
    fetched dataset is a task without ``--data-dir``.
    """
    env = os.environ.get(DATA_ENV)
    if env:
        return Path(env)
    root = find_data_root()
    return root if root is not None else user_data_dir()


class FetchRecord(BaseModel):
    """Where an installed dataset came from, written as ``FETCH.json`` in its folder.

    Attributes:
        schema_version: version of this record's layout.
        name: the dataset (and folder) name.
        source: the URL or file the archive came from.
        bytes: the archive's size.
        md5: the archive's MD5.
        sha256: the archive's SHA-256.
        verified_md5: the published MD5 the archive was checked against; ``None`` when no
            checksum was known and the archive was installed unverified.
        fetched_at: when it was installed (UTC, ISO 8601).

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = 1
    name: str
    source: str
    bytes: int
    md5: str
    sha256: str
    verified_md5: str | None
    fetched_at: str


@dataclass(frozen=True)
class FetchResult:
    """What :func:`fetch_beir` did.

    Attributes:
        name: the dataset.
        folder: the task folder (``DIR/<name>``).
        status: ``"installed"``, or ``"present"`` when a complete folder was left alone.
        record: the provenance written (``None`` when the folder was left alone).
        warnings: things the user should know (an unverified archive).

    """

    name: str
    folder: Path
    status: Literal["installed", "present"]
    record: FetchRecord | None
    warnings: tuple[str, ...] = ()


def is_complete_task_folder(folder: Path) -> bool:
    """Whether ``folder`` holds the BEIR files a task needs (corpus, queries, test qrels)."""
    try:
        find_file(folder, "corpus.jsonl")
        find_file(folder, "queries.jsonl")
        find_file(folder / "qrels", "test.tsv")
    except DatasetError:
        return False
    return True


def _archive_for(
    name: str, archives: Registry[BeirArchive], unverified_ok: bool
) -> BeirArchive | None:
    if not _NAME.fullmatch(name):
        raise DatasetError(f"dataset name {name!r} is not a plain folder name")
    if name in archives:
        return archives.get(name)
    if unverified_ok:
        return None
    try:
        return archives.get(name)
    except UnknownNameError as exc:  # names the closest; say how to install another archive
        raise UnknownNameError(
            f"{exc}. An archive in BEIR layout of another name installs with --from FILE|URL"
        ) from None


def _member_path(info: zipfile.ZipInfo, archive: Path) -> None:
    """Refuse a member that would land outside the extraction folder."""
    path = PurePosixPath(info.filename.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or re.match(r"[A-Za-z]:", info.filename):
        raise DatasetError(f"{archive}: member {info.filename!r} points outside the archive")


def _extract(archive: Path, into: Path, progress: Progress | None, stage: str) -> None:
    try:
        with zipfile.ZipFile(archive) as zf:
            members = zf.infolist()
            for info in members:
                _member_path(info, archive)
            total = sum(i.file_size for i in members)
            done = 0
            for info in members:
                zf.extract(info, into)
                done += info.file_size
                if progress is not None:
                    progress(stage, done, total)
    except (zipfile.BadZipFile, EOFError) as exc:
        raise DatasetError(f"{archive} is not a readable zip archive ({exc})") from None


def _dataset_root(staging: Path, archive: Path) -> Path:
    """The folder of the extracted archive holding the BEIR layout: its top or its one folder."""
    if is_complete_task_folder(staging):
        return staging
    folders = [p for p in staging.iterdir() if p.is_dir() and not p.name.startswith((".", "__"))]
    if len(folders) == 1 and is_complete_task_folder(folders[0]):
        return folders[0]
    raise DatasetError(
        f"{archive} holds no BEIR task folder (corpus.jsonl, queries.jsonl, qrels/test.tsv) "
        "at its top or in its one top folder; nothing was installed"
    )


def _part_path(root: Path, name: str, url: str) -> Path:
    """The partial download of ``url``: one per URL, so another source never continues it."""
    tag = hashlib.sha256(url.encode("utf-8")).hexdigest()[:10]
    return root / f".{name}-{tag}.zip.part"


def _verify(
    got: Digests, archive: BeirArchive | None, path: Path, downloaded: bool, root: Path
) -> None:
    if archive is None or got.md5 == archive.md5:
        return
    where = f"it is kept at {path}"
    if downloaded:
        rejected = root / f".{archive.name}.zip.rejected"
        os.replace(path, rejected)
        where = f"it was moved aside to {rejected}; the next fetch downloads it again"
    raise DatasetError(
        f"the archive of {archive.name} has MD5 {got.md5}, not the published "
        f"{archive.md5} (corrupted or changed upstream); {where}; nothing was installed"
    )


def _obtain(
    name: str,
    root: Path,
    source: str | None,
    base_url: str | None,
    size_hint: int | None,
    progress: Progress | None,
) -> tuple[Path, str, bool]:
    """The archive on disk: ``(path, where it came from, whether it was downloaded here)``."""
    if source is not None and "://" not in source:
        path = Path(source).expanduser()
        if not path.is_file():
            raise DatasetError(f"--from {source}: no such file")
        return path, str(path.resolve()), False
    url = source if source is not None else archive_url(name, base_url)
    part = _part_path(root, name, url)
    try:
        download(url, part, size_hint=size_hint, progress=progress, stage=f"downloading {name}")
    except UnreachableError as exc:
        raise DatasetError(f"{exc}; download the archive yourself and pass --from FILE") from exc
    return part, url, True


def fetch_beir(
    name: str,
    root: Path,
    *,
    source: str | None = None,
    base_url: str | None = None,
    force: bool = False,
    progress: Progress | None = None,
    archives: Registry[BeirArchive] = ARCHIVES,
) -> FetchResult:
    """Install BEIR dataset ``name`` as the task folder ``root/name``.

    Args:
        name: a name of ``archives`` (BEIR's datasets), or, with
            ``source``, any plain folder name (installed unverified, SHA-256 recorded).
        root: the data folder the task folder goes into (created if missing).
        source: a local archive file or a URL to take instead of BEIR's server.
        base_url: BEIR's server replaced by another with the same file names.
        force: replace a complete folder already there.
        progress: ``(stage, done, total)`` callback (bytes downloaded, bytes extracted).
        archives: the fetchable datasets and their checksums (BEIR's by default).

    Returns:
        What was done (see :class:`FetchResult`).

    Raises:
        UnknownNameError: ``name`` is not fetchable and no ``source`` was given.
        DatasetError: the server cannot be reached, the download failed, the checksum does
            not match, or the archive holds no BEIR task folder. Nothing is installed then.

    """
    archive = _archive_for(name, archives, unverified_ok=source is not None)
    out = root / name
    root.mkdir(parents=True, exist_ok=True)
    with file_lock(root / f".{name}"):
        if out.exists() and not force:
            if is_complete_task_folder(out):
                return FetchResult(name=name, folder=out, status="present", record=None)
            raise DatasetError(
                f"{out} exists but is not a complete task folder; pass --force to replace it"
            )
        path, origin, downloaded = _obtain(
            name, root, source, base_url, archive.bytes if archive else None, progress
        )
        got = digests(path)
        _verify(got, archive, path, downloaded, root)
        with staging_dir(out) as staging:
            _extract(path, staging, progress, f"extracting {name}")
            folder = _dataset_root(staging, path)
            record = FetchRecord(
                name=name,
                source=origin,
                bytes=got.bytes,
                md5=got.md5,
                sha256=got.sha256,
                verified_md5=archive.md5 if archive else None,
                fetched_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            )
            write_atomic(folder / RECORD_FILE, record.model_dump_json(indent=2) + "\n")
            fsync_tree(folder)
            publish_dir(folder, out)
        if downloaded:
            path.unlink(missing_ok=True)
    warnings: tuple[str, ...] = ()
    if archive is None:
        warnings = (
            f"{name} has no published checksum: installed unverified, its SHA-256 "
            f"{got.sha256} recorded in {out / RECORD_FILE}",
        )
    return FetchResult(name=name, folder=out, status="installed", record=record, warnings=warnings)
