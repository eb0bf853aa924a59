"""``irds:<id>`` tasks, read from collections registered in ir_datasets' own registry.

The collections are small files written by the test, registered with ir_datasets' formats
(``TsvDocs``, ``TsvQueries``, ``TrecQrels`` over ``LocalDownload``): the real ir_datasets
reading path, no network.
"""

from __future__ import annotations

import socket
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import ir_datasets
import pytest
from ir_datasets.datasets.base import Dataset
from ir_datasets.formats import TrecQrels, TsvDocs, TsvQueries
from ir_datasets.util import Download, LocalDownload, RequestsDownload

from embedding_ttc.errors import DatasetError, MissingExtraError, UnknownNameError
from embedding_ttc.tasks.catalog import load_task
from embedding_ttc.tasks.irds_loader import doc_fields


class TitledDoc(NamedTuple):
    doc_id: str
    title: str
    text: str


class ContentDoc(NamedTuple):
    doc_id: str
    content: str

    def default_text(self) -> str:
        return f"content: {self.content}"


Register = Callable[[Any], str]


@pytest.fixture
def register() -> Iterator[Register]:
    """Register datasets under fresh ids; remove them from the registry afterwards."""
    added: list[str] = []

    def add(dataset: Any) -> str:
        name = f"embedding-ttc-test/{uuid.uuid4().hex[:8]}"
        ir_datasets.registry.register(name, dataset)
        added.append(name)
        return name

    yield add
    for name in added:
        ir_datasets.registry._registered.pop(name, None)


def _write(path: Path, rows: list[str]) -> Path:
    path.write_text("".join(r + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def local_files(tmp_path: Path) -> dict[str, Path]:
    return {
        "docs": _write(
            tmp_path / "docs.tsv",
            ["d1\tCats\tCats purr.", "d2\t\tDogs bark.", "d3\tBirds\tBirds sing.", "d4\tEmpty\t"],
        ),
        "queries": _write(
            tmp_path / "queries.tsv", ["q1\twhat purrs", "q2\twho barks", "q3\tunjudged"]
        ),
        # TREC qrels: query, iteration, doc, grade. q2 has a 0 and a negative grade, a row
        # naming an unknown document, and a repeated row with the same grade.
        "qrels": _write(
            tmp_path / "qrels.txt",
            [
                *("q1 0 d1 2", "q1 0 d3 1", "q2 0 d2 1", "q2 0 d1 0", "q2 0 d3 -1"),
                *("q2 0 dX 1", "q1 0 d1 2", "qX 0 d1 1"),
            ],
        ),
    }


def _collection(files: dict[str, Path], doc_cls: type = TitledDoc) -> Dataset:
    return Dataset(
        TsvDocs(LocalDownload(files["docs"]), doc_cls=doc_cls),
        TsvQueries(LocalDownload(files["queries"])),
        TrecQrels(LocalDownload(files["qrels"]), {}),
    )


def test_a_local_collection_loads_with_titles_and_graded_judgements(
    register: Register, local_files: dict[str, Path]
) -> None:
    dataset_id = register(_collection(local_files))
    task = load_task(f"irds:{dataset_id}")
    assert task.name == f"irds:{dataset_id}"
    assert task.source == "irds"
    assert list(task.doc_ids) == ["d1", "d2", "d3", "d4"]
    assert list(task.doc_titles) == ["Cats", "", "Birds", "Empty"]
    assert list(task.doc_bodies) == ["Cats purr.", "Dogs bark.", "Birds sing.", ""]
    assert task.doc_texts[0] == "Cats Cats purr."
    # q3 has no judgement: not evaluated, as in a BEIR folder.
    assert list(task.query_ids) == ["q1", "q2"]
    assert list(task.query_texts) == ["what purrs", "who barks"]
    # Grades as given, 0 and -1 included (the BEIR loader keeps them too).
    assert {q: dict(d) for q, d in task.qrels.items()} == {
        "q1": {"d1": 2, "d3": 1},
        "q2": {"d2": 1, "d1": 0, "d3": -1},
    }
    assert task.pools is None
    assert task.metadata["irds_id"] == dataset_id
    assert task.metadata["doc_type"] == "TitledDoc"
    assert sorted(task.warnings) == sorted(
        [
            "1 qrels rows dropped: unknown corpus ids",
            "1 qrels rows dropped: unknown query ids",
            "1 repeated qrels rows (same grade) counted once",
            "1 queries without judgements not evaluated",
        ]
    )


def test_doc_types_are_read_through_their_fields(
    register: Register, local_files: dict[str, Path], tmp_path: Path
) -> None:
    generic = dict(local_files, docs=_write(tmp_path / "g.tsv", ["d1\tCats purr.", "d2\tDogs."]))
    task = load_task(f"irds:{register(_collection(generic, ir_datasets.formats.GenericDoc))}")
    assert list(task.doc_titles) == ["", ""]
    assert list(task.doc_bodies) == ["Cats purr.", "Dogs."]
    # A type without text or body falls back to its default_text(), title left empty.
    assert doc_fields(ContentDoc("d1", "x")) == ("", "content: x")
    assert doc_fields(TitledDoc("d1", "T", "body")) == ("T", "body")

    class Opaque(NamedTuple):
        doc_id: str
        blob: bytes

    with pytest.raises(DatasetError, match="Opaque has no text field"):
        doc_fields(Opaque("d1", b""))


def test_a_conflicting_repeated_judgement_is_an_error(
    register: Register, local_files: dict[str, Path], tmp_path: Path
) -> None:
    files = dict(local_files, qrels=_write(tmp_path / "c.txt", ["q1 0 d1 2", "q1 0 d1 1"]))
    with pytest.raises(DatasetError, match=r"\(q1, d1\) is judged twice with different grades"):
        load_task(f"irds:{register(_collection(files))}")


def test_an_unknown_id_suggests_close_ids() -> None:
    with pytest.raises(UnknownNameError) as info:
        load_task("irds:beir/scifact/tset")
    assert "irds:beir/scifact/tset" not in str(info.value)  # names the id, not the task name
    assert "'beir/scifact/tset'" in str(info.value)
    assert "beir/scifact/test" in str(info.value)


def test_a_dataset_without_qrels_says_so_and_names_ids_that_have_them() -> None:
    # beir/scifact holds the corpus and all queries; its splits hold the judgements.
    with pytest.raises(DatasetError) as info:
        load_task("irds:beir/scifact")
    message = str(info.value)
    assert "provides no qrels" in message
    assert "irds:beir/scifact/test" in message


def test_a_local_dataset_without_queries_says_which_part_is_missing(
    register: Register, local_files: dict[str, Path]
) -> None:
    docs_only = Dataset(TsvDocs(LocalDownload(local_files["docs"]), doc_cls=TitledDoc))
    with pytest.raises(DatasetError, match="provides no queries and no qrels"):
        load_task(f"irds:{register(docs_only)}")


def test_without_ir_datasets_the_error_is_the_install_hint(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "ir_datasets", None)  # import now raises ImportError
    with pytest.raises(MissingExtraError) as info:
        load_task("irds:beir/scifact/test")
    assert "pip install -e '.[irds]'" in str(info.value)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_data_not_downloaded_and_unreachable_says_it_must_be_downloaded(
    register: Register, local_files: dict[str, Path], tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "irds-home"))
    monkeypatch.setenv("IR_DATASETS_DL_TRIES", "1")
    url = f"http://127.0.0.1:{_closed_port()}/docs.tsv"
    unreachable = Dataset(
        TsvDocs(Download([RequestsDownload(url)]), doc_cls=TitledDoc),
        TsvQueries(LocalDownload(local_files["queries"])),
        TrecQrels(LocalDownload(local_files["qrels"]), {}),
    )
    dataset_id = register(unreachable)
    with pytest.raises(DatasetError) as info:
        load_task(f"irds:{dataset_id}")
    message = str(info.value)
    assert f"irds:{dataset_id}" in message
    assert f"({url}: [Errno " in message  # the source and the socket's reason, not the chain
    assert "must be downloaded once with network access" in message
    assert str(tmp_path / "irds-home") in message
    assert "$IR_DATASETS_HOME" in message
    assert "\n" not in message
