"""The packaged tasks: the same content as their source, rebuilt byte for byte, shipped whole."""

import gzip
import json
from fnmatch import fnmatch
from pathlib import Path

import pytest

from embedding_ttc.errors import DatasetError, UnknownNameError
from embedding_ttc.tasks.beir import load_beir_folder
from embedding_ttc.tasks.fingerprint import task_fingerprint
from embedding_ttc.tasks.packaged import (
    PACKAGED_TASKS,
    load_packaged_task,
    packaged_folder,
    packaged_root,
)
from embedding_ttc.tasks.packaged.build import gzip_bytes, pack_all, pack_task

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", PACKAGED_TASKS)
def test_a_packaged_task_is_its_source_task(shared_datasets: Path, name: str):
    packaged = load_packaged_task(name)
    source = load_beir_folder(shared_datasets / name, name)
    stats = json.loads((shared_datasets / name / "STATS.json").read_text())
    assert (packaged.n_docs, packaged.n_queries) == (stats["n_docs"], stats["n_queries"])
    assert sum(len(q) for q in packaged.qrels.values()) == stats["n_qrels"]
    assert (packaged.n_docs, packaged.n_queries) == (source.n_docs, source.n_queries)
    assert task_fingerprint(packaged) == task_fingerprint(source)
    assert packaged.warnings == source.warnings


def test_the_build_reproduces_the_packaged_bytes(shared_datasets: Path, tmp_path: Path):
    written = pack_all(shared_datasets, tmp_path)
    assert len(written) == 4 * len(PACKAGED_TASKS)
    for path in written:
        shipped = packaged_root() / path.relative_to(tmp_path)
        assert shipped.read_bytes() == path.read_bytes(), f"{shipped} differs from a rebuild"


def test_the_gzip_stream_carries_no_name_and_no_time():
    data = gzip_bytes(b"a line\n")
    assert data[:3] == b"\x1f\x8b\x08" and data[3] == 0  # deflate, no FNAME/FEXTRA/FCOMMENT
    assert data[4:8] == b"\0\0\0\0"  # mtime 0
    assert gzip.decompress(data) == b"a line\n"
    assert gzip_bytes(b"a line\n") == data


def test_packing_a_folder_without_its_queries_names_the_file(tmp_path: Path):
    src = tmp_path / "src"
    (src / "qrels").mkdir(parents=True)
    (src / "corpus.jsonl").write_text('{"_id": "d1", "text": "x"}\n')
    with pytest.raises(DatasetError, match=r"cannot package src: no .*queries\.jsonl"):
        pack_task(src, tmp_path / "out")


@pytest.mark.parametrize("name", PACKAGED_TASKS)
def test_every_packaged_task_has_a_notice_naming_licence_and_source(name: str):
    folder = packaged_folder(name)
    stats = json.loads((folder / "STATS.json").read_text())
    notice = (folder / "NOTICE").read_text()
    licence = stats["license"].split()[0]  # "MIT", "Apache-2.0", "CC-BY-4.0"
    spelled = {"Apache-2.0": "Apache License 2.0", "CC-BY-4.0": "CC-BY-4.0", "MIT": "MIT"}
    assert spelled[licence] in notice
    assert stats["commit"] in notice
    repo = stats["source"].split()[0].removeprefix("github:")
    assert f"https://github.com/{repo}" in notice
    assert "python -m embedding_ttc.tasks.packaged.build" in notice
    if licence == "Apache-2.0":  # section 4(a): a copy of the licence goes with the work
        assert "TERMS AND CONDITIONS" in (folder / "LICENSE").read_text()


def test_every_packaged_file_is_in_the_package_data():
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from 3.11")
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    globs = config["tool"]["setuptools"]["package-data"]["embedding_ttc"]
    package = REPO / "src" / "embedding_ttc"
    files = [
        p for p in packaged_root().rglob("*") if p.is_file() and p.suffix not in (".py", ".pyc")
    ]
    assert len(files) >= 5 * len(PACKAGED_TASKS)
    for path in files:
        rel = path.relative_to(package).as_posix()
        assert any(fnmatch(rel, g) for g in globs), f"{rel} is not in the package data"


def test_an_unknown_packaged_name_suggests():
    with pytest.raises(UnknownNameError, match="Did you mean: limit-small"):
        packaged_folder("limit_small")
