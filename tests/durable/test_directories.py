"""Durable folders: staging, publishing (new, swapped, or moved aside), checksums, locks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from embedding_ttc.durable import (
    FileEntry,
    check_files,
    checksums,
    directories,
    file_lock,
    link_or_copy,
    publish_dir,
    staging_dir,
)


class Damaged(Exception):
    pass


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def stage(out: Path, text: str) -> None:
    with staging_dir(out) as tmp:
        assert tmp.parent == out.parent and tmp.name.startswith(f".{out.name}.tmp-")
        (tmp / "sub").mkdir()
        (tmp / "sub" / "f.txt").write_text(text)
        publish_dir(tmp, out)


def test_a_new_folder_is_published_by_a_rename(tmp_path: Path):
    stage(tmp_path / "ix", "one")
    assert (tmp_path / "ix" / "sub" / "f.txt").read_text() == "one"
    assert names(tmp_path) == ["ix"]


@pytest.mark.parametrize("swap", [True, False])
def test_an_old_folder_is_replaced_whole_with_or_without_renameat2(tmp_path, monkeypatch, swap):
    stage(tmp_path / "ix", "one")
    if not swap:
        monkeypatch.setattr(directories, "exchange", lambda a, b: False)
    stage(tmp_path / "ix", "two")
    assert (tmp_path / "ix" / "sub" / "f.txt").read_text() == "two"
    assert names(tmp_path) == ["ix"]  # no .tmp- or .old- folder left


def test_an_error_while_staging_leaves_nothing(tmp_path: Path):
    with pytest.raises(RuntimeError), staging_dir(tmp_path / "ix") as tmp:
        (tmp / "f").write_text("half")
        raise RuntimeError
    assert names(tmp_path) == []


def test_checksums_record_every_file_but_the_skipped_ones(tmp_path: Path):
    stage(tmp_path / "ix", "one")
    (tmp_path / "ix" / "manifest.json").write_text("{}")
    files = checksums(tmp_path / "ix", skip={"manifest.json"})
    assert files == {
        "sub/f.txt": FileEntry(
            bytes=3, sha256="7692c3ad3540bb803c020b3aee66cd8887123234ea0c6e7143c0add73ff431ed"
        )
    }


def check(root: Path, files: dict[str, FileEntry], verify: bool = False) -> None:
    check_files(root, files, verify=verify, error=Damaged, what="test file", remedy="redo it")


def test_check_files_names_a_missing_resized_or_altered_file(tmp_path: Path):
    stage(tmp_path / "ix", "one")
    root = tmp_path / "ix"
    files = checksums(root)
    check(root, files, verify=True)
    (root / "sub" / "f.txt").write_text("two")  # same size, other bytes
    check(root, files)  # sizes only
    with pytest.raises(Damaged, match=r"test file .*f\.txt does not match its SHA-256.*; redo it"):
        check(root, files, verify=True)
    (root / "sub" / "f.txt").write_text("three")
    with pytest.raises(Damaged, match=r"f\.txt is 5 bytes, the manifest says 3 \(truncated"):
        check(root, files)
    (root / "sub" / "f.txt").unlink()
    with pytest.raises(Damaged, match=r"test file .*f\.txt is missing"):
        check(root, files)


def test_link_or_copy_copies_where_a_hard_link_fails(tmp_path: Path, monkeypatch):
    (tmp_path / "a").write_text("x")
    link_or_copy(tmp_path / "a", tmp_path / "new" / "b")
    assert (tmp_path / "new" / "b").stat().st_ino == (tmp_path / "a").stat().st_ino

    def no_link(src: object, dst: object) -> None:
        raise OSError("cross-device link")

    monkeypatch.setattr(os, "link", no_link)
    link_or_copy(tmp_path / "a", tmp_path / "c")
    assert (tmp_path / "c").read_text() == "x"
    assert (tmp_path / "c").stat().st_ino != (tmp_path / "a").stat().st_ino


def test_file_lock_is_the_lock_file_beside_the_path(tmp_path: Path):
    lock = file_lock(tmp_path / "deep" / "model.gguf")
    with lock:
        assert (tmp_path / "deep" / "model.gguf.lock").exists()
