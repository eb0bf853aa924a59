"""Moving a file-per-entry cache folder into its database: complete, idempotent, kill-safe."""

from __future__ import annotations

import multiprocessing as mp
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from embedding_ttc.encoders.cache import CachedEncoder
from embedding_ttc.encoders.cache_migration import (
    has_legacy_layout,
    migrate_folder,
    read_legacy,
)
from embedding_ttc.encoders.cache_store import STORE_NAME, CacheStore
from legacy_cache import entry_files, legacy_cache

from fakes import HashingEncoder

TEXTS = [f"passage {i} about subject {i % 7}" for i in range(40)]


def test_an_encoder_moves_the_old_layout_in_on_first_use(tmp_path: Path):
    old = legacy_cache(tmp_path, TEXTS)
    assert has_legacy_layout(old.dir) and len(entry_files(old.dir)) == 40
    inner = HashingEncoder(dim=16)
    enc = CachedEncoder(inner, tmp_path)
    out = enc.encode(TEXTS, view="retrieval.passage")
    assert inner.calls == [] and enc.stats.hits == 40  # every entry came from the old files
    np.testing.assert_array_equal(out, inner.encode(TEXTS, view="retrieval.passage"))
    assert entry_files(enc.dir) == [] and not has_legacy_layout(enc.dir)
    assert len(enc.store) == 40
    # Migrated rows have no view; their key still finds them, and twins (shared views) too.
    again = CachedEncoder(inner, tmp_path)
    again.encode(TEXTS, view="text-matching")
    assert again.stats.hits == 40 and again.stats.misses == 0


def test_the_old_reader_reads_what_the_old_writer_wrote(tmp_path: Path):
    enc = legacy_cache(tmp_path, TEXTS[:2])
    key = enc.key(TEXTS[0], "retrieval.passage", None)
    want = HashingEncoder(dim=16).encode(TEXTS[:1], view="retrieval.passage")[0]
    np.testing.assert_array_equal(read_legacy(enc.dir, key, 16), want)
    assert read_legacy(enc.dir, key, 32) is None  # another dimension: corrupt
    assert read_legacy(enc.dir, b"\0" * 32, 16) is None  # absent


def test_corrupt_entries_are_counted_dropped_and_recomputed(tmp_path: Path):
    enc = legacy_cache(tmp_path, TEXTS[:10])
    files = entry_files(enc.dir)
    blob = bytearray(files[0].read_bytes())
    blob[20] ^= 0xFF  # a flipped payload byte
    files[0].write_bytes(bytes(blob))
    files[1].write_bytes(files[1].read_bytes()[:30])  # truncated
    files[2].write_bytes(files[2].read_bytes() + b"\0")  # a byte too many
    tmp = files[3].with_name(f".{files[3].name}.123-0.tmp")  # a killed writer's leftover
    tmp.write_bytes(b"partial")
    stray = enc.dir / "00" / "notes.txt"  # not an entry: kept, with its folder
    stray.parent.mkdir(exist_ok=True)
    stray.write_text("mine")
    report = migrate_folder(enc.dir)
    assert (report.moved, report.kept, report.corrupt) == (7, 0, 3)
    assert report.removed == 11  # ten entries and the temporary file
    assert stray.read_text() == "mine" and not tmp.exists() and entry_files(enc.dir) == []
    inner = HashingEncoder(dim=16)
    fresh = CachedEncoder(inner, tmp_path)
    out = fresh.encode(TEXTS[:10], view="retrieval.passage")
    assert fresh.stats.hits == 7 and fresh.stats.misses == 3
    np.testing.assert_array_equal(out, inner.encode(TEXTS[:10], view="retrieval.passage"))


def test_a_second_run_after_a_crash_before_the_deletes_duplicates_nothing(tmp_path: Path):
    enc = legacy_cache(tmp_path, TEXTS)
    backup = tmp_path / "backup"
    shutil.copytree(enc.dir, backup)
    first = migrate_folder(enc.dir, batch=7)
    assert first.moved == 40
    for path in entry_files(backup):  # the rows are committed, the files came back
        target = enc.dir / path.relative_to(backup)
        target.parent.mkdir(exist_ok=True)
        shutil.copy2(path, target)
    second = migrate_folder(enc.dir, batch=7)
    assert (second.moved, second.kept, second.corrupt) == (0, 40, 0)
    assert len(CacheStore(enc.dir / STORE_NAME)) == 40 and entry_files(enc.dir) == []


def test_created_time_is_the_entry_files_time(tmp_path: Path):
    enc = legacy_cache(tmp_path, TEXTS[:3])
    old = time.time() - 30 * 86400
    for path in entry_files(enc.dir):
        os.utime(path, (old, old))
    migrate_folder(enc.dir)
    store = CacheStore(enc.dir / STORE_NAME)
    assert store.count(before=time.time() - 29 * 86400) == 3
    assert store.count(before=old - 1) == 0


MIGRATE_SLOWLY = """
import sys, time
from pathlib import Path
from embedding_ttc.encoders.cache_migration import migrate_folder
# A pause after each transaction, so that the parent's SIGKILL lands in the middle.
migrate_folder(Path(sys.argv[1]), batch=5, progress=lambda done, total: time.sleep(0.01))
"""


def test_sigkill_mid_migration_loses_and_duplicates_nothing(tmp_path: Path):
    texts = [f"entry {i} of the killed migration" for i in range(1500)]
    enc = legacy_cache(tmp_path, texts)
    total = len(entry_files(enc.dir))
    assert total == len(texts)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    cut_at = []
    for fraction in (0.2, 0.5, 0.8):  # three kills, each once the migration is under way
        child = subprocess.Popen([sys.executable, "-c", MIGRATE_SLOWLY, str(enc.dir)], env=env)
        deadline = time.monotonic() + 60
        while len(entry_files(enc.dir)) > total * (1 - fraction) and time.monotonic() < deadline:
            time.sleep(0.002)
        child.send_signal(signal.SIGKILL)
        assert child.wait() == -signal.SIGKILL
        cut_at.append(len(entry_files(enc.dir)))
    assert all(0 < left < total for left in cut_at), cut_at  # every kill landed mid-way
    report = migrate_folder(enc.dir)
    assert report.corrupt == 0
    store = CacheStore(enc.dir / STORE_NAME)
    assert len(store) == len(texts) and entry_files(enc.dir) == []
    assert not has_legacy_layout(enc.dir)
    inner = HashingEncoder(dim=16)
    keys = [enc.key(t, "retrieval.passage", None) for t in texts]
    found, corrupt = store.get(keys, 16)
    assert corrupt == 0 and len(found) == len(texts)
    want = inner.encode(texts, view="retrieval.passage")
    np.testing.assert_array_equal(np.stack([found[k] for k in keys]), want)


def _migrate(folder: str) -> tuple[int, int]:
    report = migrate_folder(Path(folder), batch=3)
    return report.moved, report.kept


def test_two_processes_migrating_at_once_move_each_entry_once(tmp_path: Path):
    enc = legacy_cache(tmp_path, [f"shared text {i}" for i in range(300)])
    with mp.get_context("spawn").Pool(2) as pool:
        results = pool.map(_migrate, [str(enc.dir)] * 2)
    assert sum(moved for moved, _ in results) == 300
    assert sum(kept for _, kept in results) == 0  # the lock: no entry was read twice
    assert len(CacheStore(enc.dir / STORE_NAME)) == 300


def test_batch_is_checked(tmp_path: Path):
    with pytest.raises(ValueError, match="batch"):
        migrate_folder(tmp_path, batch=0)
