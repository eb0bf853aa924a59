"""``embedding-ttc cache stats | prune`` over a cache root written by fake encoders."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from embedding_ttc.cli import main
from embedding_ttc.encoders.cache import CachedEncoder
from embedding_ttc.encoders.cache_store import STORE_NAME, disk_bytes

from fakes import HashingEncoder

QUERIES = [f"question {i}" for i in range(30)]
PASSAGES = [f"passage number {i} on topic {i % 4}" for i in range(200)]


def fill(root: Path) -> tuple[CachedEncoder, CachedEncoder]:
    """Two models: a two-view one (queries and passages) and a one-view one (passages)."""
    two = CachedEncoder(HashingEncoder(dim=64, two_views=True), root)
    two.encode(QUERIES, view="retrieval.query")
    two.encode(PASSAGES, view="retrieval.passage")
    one = CachedEncoder(HashingEncoder(dim=32, seed=1), root)
    one.encode(PASSAGES[:50], view="retrieval.passage")
    return two, one


def stats(root: Path, capsys) -> dict[str, dict]:
    assert main(["cache", "stats", "--cache-dir", str(root), "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    doc = json.loads(out)
    assert doc["cache_dir"] == str(root)
    return {m["model"]: m for m in doc["models"]}


def test_stats_reports_entries_per_view_and_bytes(tmp_path: Path, capsys):
    two, one = fill(tmp_path)
    models = stats(tmp_path, capsys)
    assert set(models) == {two.dir.name, one.dir.name}
    m = models[two.dir.name]
    assert m["views"] == {"retrieval.passage": 200, "retrieval.query": 30}
    assert (m["entries"], m["dim"], m["model_id"]) == (230, 64, "fake/hashing")
    assert m["vector_bytes"] == 230 * 64 * 4
    assert m["disk_bytes"] == disk_bytes(two.dir / STORE_NAME)
    assert m["ratio"] == pytest.approx(m["disk_bytes"] / m["vector_bytes"], abs=1e-4)
    assert models[one.dir.name]["views"] == {"retrieval.passage": 50}


def test_stats_table_piped_names_each_model_and_view(tmp_path: Path, capsys):
    two, _ = fill(tmp_path)
    assert main(["cache", "stats", "--cache-dir", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split("\t") == [
        "model",
        "view",
        "entries",
        "dim",
        "vectors MB",
        "disk MB",
        "disk/vectors",
    ]
    rows = {tuple(line.split("\t")[:3]) for line in lines[1:]}
    assert (two.dir.name, "retrieval.query", "30") in rows
    assert (two.dir.name, "all", "230") in rows


def _age(db: Path, view: str, days: float) -> None:
    """Backdate one view's rows, as if they had been written ``days`` ago."""
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE entries SET created = ? WHERE view = (SELECT id FROM views WHERE name = ?)",
            (int(time.time() - days * 86400), view),
        )


def test_prune_older_than_deletes_only_old_entries_and_frees_the_disk(tmp_path: Path, capsys):
    two, one = fill(tmp_path)
    db = two.dir / STORE_NAME
    _age(db, "retrieval.passage", 40)
    argv = ["cache", "prune", "--cache-dir", str(tmp_path), "--older-than", "30"]
    assert main([*argv, "--dry-run"]) == 0
    rows = {line.split("\t")[0]: line.split("\t") for line in capsys.readouterr().out.splitlines()}
    assert rows[two.dir.name][1] == "200" and rows[one.dir.name][1] == "0"
    assert stats(tmp_path, capsys)[two.dir.name]["entries"] == 230  # a dry run deletes nothing
    before = disk_bytes(db)
    assert main(argv) == 0
    capsys.readouterr()
    models = stats(tmp_path, capsys)
    assert models[two.dir.name]["views"] == {"retrieval.query": 30}
    assert models[one.dir.name]["entries"] == 50
    assert disk_bytes(db) < before - 200 * 64 * 4  # VACUUM gave the space back
    again = CachedEncoder(HashingEncoder(dim=64, two_views=True), tmp_path)
    again.encode(PASSAGES[:5], view="retrieval.passage")
    assert again.stats.misses == 5  # pruned entries are computed again


def test_prune_one_model_by_folder_and_all(tmp_path: Path, capsys):
    two, one = fill(tmp_path)
    argv = ["cache", "prune", "--cache-dir", str(tmp_path)]
    assert main([*argv, "--model", one.dir.name]) == 0
    capsys.readouterr()
    models = stats(tmp_path, capsys)
    assert models[one.dir.name]["entries"] == 0 and models[two.dir.name]["entries"] == 230
    assert main([*argv, "--all"]) == 0
    capsys.readouterr()
    assert all(m["entries"] == 0 for m in stats(tmp_path, capsys).values())


def test_prune_by_model_id_takes_every_revision(tmp_path: Path, capsys):
    two, one = fill(tmp_path)  # both are fake/hashing, at revisions seed=0 and seed=1
    other = CachedEncoder(HashingEncoder(dim=8), tmp_path / "x")
    other.encode(["kept"], view="retrieval.query")
    assert main(["cache", "prune", "--cache-dir", str(tmp_path), "--model", "fake/hashing"]) == 0
    out = capsys.readouterr().out
    assert {line.split("\t")[0] for line in out.splitlines()[1:3]} == {two.dir.name, one.dir.name}
    assert all(m["entries"] == 0 for m in stats(tmp_path, capsys).values())


def test_prune_an_unknown_model_names_the_closest(tmp_path: Path, capsys):
    two, _ = fill(tmp_path)
    argv = ["cache", "prune", "--cache-dir", str(tmp_path), "--model", two.dir.name[:-2]]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("embedding-ttc: error: no cached model") and two.dir.name in err
    assert stats(tmp_path, capsys)[two.dir.name]["entries"] == 230


def test_prune_needs_exactly_one_selection(tmp_path: Path, capsys):
    with pytest.raises(SystemExit):
        main(["cache", "prune", "--cache-dir", str(tmp_path)])
    with pytest.raises(SystemExit):
        main(["cache", "prune", "--cache-dir", str(tmp_path), "--all", "--model", "x"])
    with pytest.raises(SystemExit):
        main(["cache", "prune", "--cache-dir", str(tmp_path), "--older-than", "-1"])
    assert "days must be 0 or more" in capsys.readouterr().err
