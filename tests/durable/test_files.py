"""Durable files: atomic replacement, the temporary names, the fsynced writers of staged files."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

from embedding_ttc.durable import (
    fsync_tree,
    replacing,
    save_array,
    save_stacked,
    sha256_file,
    write_atomic,
    write_lines,
)


def test_write_atomic_replaces_the_file_and_leaves_no_temporary(tmp_path: Path):
    path = tmp_path / "a.json"
    write_atomic(path, "old\n")
    write_atomic(path, "new\n")
    write_atomic(tmp_path / "b.bin", b"\x00\x01")
    write_atomic(tmp_path / "c.bin", b"unsynced", sync=False)
    assert path.read_text() == "new\n"
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\x01"
    assert (tmp_path / "c.bin").read_bytes() == b"unsynced"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.bin", "c.bin"]


def test_write_atomic_gets_the_umask_permissions(tmp_path: Path):
    write_atomic(tmp_path / "a", b"x")
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "a").stat().st_mode & 0o777 == 0o666 & ~umask


def test_replacing_renames_the_written_temporary_over_the_target(tmp_path: Path):
    path = tmp_path / "run.trec"
    path.write_text("old\n")
    with replacing(path, suffix=".part") as tmp:
        assert tmp.parent == tmp_path
        assert tmp.name.startswith(".run.trec.") and tmp.name.endswith(".part")
        assert tmp.read_bytes() == b""  # created empty, reserved for this call
        tmp.write_text("new\n")
        assert path.read_text() == "old\n"  # not visible before the block ends
    assert path.read_text() == "new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["run.trec"]


def test_an_error_in_the_block_keeps_the_old_file_and_removes_the_temporary(tmp_path: Path):
    path = tmp_path / "a.txt"
    path.write_text("old")
    with pytest.raises(RuntimeError, match="boom"), replacing(path) as tmp:
        tmp.write_text("half")
        raise RuntimeError("boom")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_two_writers_of_one_file_never_share_a_temporary(tmp_path: Path):
    path = tmp_path / "a.txt"
    with replacing(path) as first, replacing(path) as second:
        assert first != second
        first.write_text("first")
        second.write_text("second")
    assert path.read_text() == "first"  # the outer block ends last


def test_a_leftover_temporary_of_the_same_name_is_skipped(tmp_path: Path, monkeypatch):
    import itertools

    from embedding_ttc.durable import files

    monkeypatch.setattr(files, "_SERIAL", itertools.count(7))
    stale = tmp_path / f".a.txt.{os.getpid()}-7.tmp"
    stale.write_text("a killed writer's")
    write_atomic(tmp_path / "a.txt", "mine")
    assert (tmp_path / "a.txt").read_text() == "mine"
    assert stale.read_text() == "a killed writer's"


def test_sha256_file_is_hashlibs(tmp_path: Path):
    data = np.random.default_rng(0).bytes(3 << 20)  # several read blocks
    (tmp_path / "f").write_bytes(data)
    assert sha256_file(tmp_path / "f") == hashlib.sha256(data).hexdigest()


def test_save_stacked_writes_the_concatenation(tmp_path: Path):
    parts = [np.ones((2, 3), np.float32), np.zeros((0, 3), np.float32), np.eye(3, dtype=np.float32)]
    save_stacked(tmp_path / "d" / "x.npy", parts, 3)
    np.testing.assert_array_equal(np.load(tmp_path / "d" / "x.npy"), np.concatenate(parts))
    save_array(tmp_path / "y.npy", np.arange(4))
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), np.arange(4))


def test_write_lines_escapes_text_and_appends_to_an_earlier_file(tmp_path: Path):
    write_lines(tmp_path / "a.jsonl", iter(["é", "x\ny"]))
    write_lines(tmp_path / "b.jsonl", iter([{"k": 1}]), append_to=tmp_path / "a.jsonl")
    raw = (tmp_path / "b.jsonl").read_bytes()
    assert raw.isascii()
    assert [json.loads(line) for line in raw.splitlines()] == ["é", "x\ny", {"k": 1}]


def test_fsync_tree_syncs_every_file_and_folder(tmp_path: Path, monkeypatch):
    (tmp_path / "a" / "b").mkdir(parents=True)
    for rel in ("f", "a/g", "a/b/h"):
        (tmp_path / rel).write_text(rel)
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd)))
    fsync_tree(tmp_path)
    assert len(synced) == 6  # three files, three folders
