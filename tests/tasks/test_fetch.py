"""``data fetch``: the real download, check, extraction and publication, over a local server.

The server (``http.server`` in a thread) serves zip archives built here, in BEIR's layout,
honouring ``Range`` or (the variant) ignoring it, and can drop a connection mid-body to
interrupt a download. Nothing reaches the internet.
"""

from __future__ import annotations

import hashlib
import io
import json
import random
import re
import socket
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from embedding_ttc.cli import main
from embedding_ttc.errors import DatasetError, UnknownNameError
from embedding_ttc.registry import Registry
from embedding_ttc.tasks.beir_archives import (
    ARCHIVES,
    BASE_URL,
    BeirArchive,
    archive_url,
    fetchable_names,
)
from embedding_ttc.tasks.catalog import load_task, user_data_dir
from embedding_ttc.tasks.fetch import RECORD_FILE, FetchRecord, default_fetch_dir, fetch_beir

CORPUS = [
    {"_id": "d1", "title": "Cats", "text": "Cats purr when content."},
    {"_id": "d2", "title": "", "text": "Dogs bark at strangers."},
    {"_id": "d3", "title": "Birds", "text": "Birds sing at dawn."},
]
QUERIES = [{"_id": "q1", "text": "what purrs"}, {"_id": "q2", "text": "who barks"}]
QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t2\nq2\td2\t1\nq2\td1\t0\n"


def beir_zip(name: str, *, nested: bool = True, stored: bool = False) -> bytes:
    """A BEIR archive: ``<name>/corpus.jsonl`` etc. (or at the top when not ``nested``)."""
    prefix = f"{name}/" if nested else ""
    buffer = io.BytesIO()
    method = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
    with zipfile.ZipFile(buffer, "w", method) as zf:
        zf.writestr(f"{prefix}corpus.jsonl", "".join(json.dumps(d) + "\n" for d in CORPUS))
        zf.writestr(f"{prefix}queries.jsonl", "".join(json.dumps(q) + "\n" for q in QUERIES))
        zf.writestr(f"{prefix}qrels/test.tsv", QRELS)
        zf.writestr(f"{prefix}qrels/train.tsv", QRELS)
        # Incompressible filler, so the archive is large enough to be cut mid-way.
        zf.writestr(f"{prefix}filler.bin", random.Random(0).randbytes(64_000))
    return buffer.getvalue()


def md5(data: bytes) -> str:
    return hashlib.md5(data, usedforsecurity=False).hexdigest()


def registry_of(**archives: bytes) -> Registry[BeirArchive]:
    reg: Registry[BeirArchive] = Registry("BEIR dataset")
    for name, data in archives.items():
        reg.register(name, BeirArchive(name, md5(data), len(data)))
    return reg


@dataclass
class Served:
    path: str
    range: str | None
    status: int
    sent: int


@dataclass
class ArchiveServer:
    """Serves ``files`` by path; records every request; can cut the next body short."""

    files: dict[str, bytes]
    ranges: bool = True
    cut_next_after: int | None = None
    log: list[Served] = field(default_factory=list)
    url: str = ""

    def handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                data = server.files.get(self.path)
                asked = self.headers.get("Range")
                if data is None:
                    self.send_error(404)
                    server.log.append(Served(self.path, asked, 404, 0))
                    return
                start, status = 0, 200
                match = re.fullmatch(r"bytes=(\d+)-", asked or "") if server.ranges else None
                if match:
                    start = int(match.group(1))
                    if start >= len(data):
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{len(data)}")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        server.log.append(Served(self.path, asked, 416, 0))
                        return
                    status = 206
                body = data[start:]
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                if server.ranges:
                    self.send_header("Accept-Ranges", "bytes")
                if status == 206:
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                self.end_headers()
                if server.cut_next_after is not None:
                    body, server.cut_next_after = body[: server.cut_next_after], None
                    self.close_connection = True
                self.wfile.write(body)
                server.log.append(Served(self.path, asked, status, len(body)))

        return Handler


@pytest.fixture
def serve() -> Iterator[object]:
    servers: list[ThreadingHTTPServer] = []

    def start(files: dict[str, bytes], ranges: bool = True) -> ArchiveServer:
        state = ArchiveServer({f"/{k}": v for k, v in files.items()}, ranges=ranges)
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), state.handler())
        threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
        servers.append(httpd)
        state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
        return state

    yield start
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()


def leftovers(root: Path) -> list[str]:
    """Hidden entries a fetch may leave: only lock files are allowed after success."""
    return sorted(p.name for p in root.iterdir() if p.name.startswith(".") and p.suffix != ".lock")


def test_a_fresh_fetch_installs_a_task_that_loads(serve, tmp_path: Path) -> None:
    data = beir_zip("tiny")
    server = serve({"tiny.zip": data})
    events: list[tuple[str, int, int]] = []
    result = fetch_beir(
        "tiny",
        tmp_path,
        base_url=server.url,
        archives=registry_of(tiny=data),
        progress=lambda *e: events.append(e),
    )
    assert result.status == "installed"
    assert result.folder == tmp_path / "tiny"
    assert sorted(p.name for p in (tmp_path / "tiny" / "qrels").iterdir()) == [
        "test.tsv",
        "train.tsv",
    ]
    record = FetchRecord.model_validate_json((tmp_path / "tiny" / RECORD_FILE).read_text())
    assert record.md5 == record.verified_md5 == md5(data)
    assert record.sha256 == hashlib.sha256(data).hexdigest()
    assert record.bytes == len(data)
    assert record.source == f"{server.url}/tiny.zip"
    assert leftovers(tmp_path) == []  # no .part, no staging folder
    downloads = [e for e in events if e[0] == "downloading tiny"]
    assert downloads[-1][1:] == (len(data), len(data))

    task = load_task("tiny", tmp_path)
    assert list(task.doc_ids) == ["d1", "d2", "d3"]
    assert {q: dict(d) for q, d in task.qrels.items()} == {
        "q1": {"d1": 2},
        "q2": {"d2": 1, "d1": 0},
    }
    assert result.warnings == ()


def test_an_interrupted_download_resumes_with_a_range_request(serve, tmp_path: Path) -> None:
    data = beir_zip("tiny")
    server = serve({"tiny.zip": data})
    server.cut_next_after = 5000
    archives = registry_of(tiny=data)
    with pytest.raises(DatasetError, match="stopped after 5000 of"):
        fetch_beir("tiny", tmp_path, base_url=server.url, archives=archives)
    assert not (tmp_path / "tiny").exists()
    (part,) = [p for p in tmp_path.iterdir() if p.name.endswith(".zip.part")]
    assert part.read_bytes() == data[:5000]

    result = fetch_beir("tiny", tmp_path, base_url=server.url, archives=archives)
    assert result.status == "installed"
    resumed = server.log[-1]
    assert (resumed.range, resumed.status, resumed.sent) == ("bytes=5000-", 206, len(data) - 5000)
    assert result.record is not None and result.record.md5 == md5(data)
    assert not part.exists()


def test_a_server_ignoring_range_is_downloaded_again_from_the_start(serve, tmp_path: Path) -> None:
    data = beir_zip("tiny")
    server = serve({"tiny.zip": data}, ranges=False)
    server.cut_next_after = 5000
    archives = registry_of(tiny=data)
    with pytest.raises(DatasetError, match="run the same command again to resume"):
        fetch_beir("tiny", tmp_path, base_url=server.url, archives=archives)
    (part,) = [p for p in tmp_path.iterdir() if p.name.endswith(".zip.part")]
    part.write_bytes(b"not a prefix of the archive")  # a 200 answer must replace it whole

    result = fetch_beir("tiny", tmp_path, base_url=server.url, archives=archives)
    assert result.status == "installed"
    assert (server.log[-1].range, server.log[-1].status, server.log[-1].sent) == (
        f"bytes={len(b'not a prefix of the archive')}-",
        200,
        len(data),
    )


def test_a_whole_part_left_by_a_killed_fetch_is_checked_not_downloaded(
    serve, tmp_path: Path
) -> None:
    data = beir_zip("tiny")
    server = serve({"tiny.zip": data})
    server.cut_next_after = 100
    archives = registry_of(tiny=data)
    with pytest.raises(DatasetError):
        fetch_beir("tiny", tmp_path, base_url=server.url, archives=archives)
    (part,) = [p for p in tmp_path.iterdir() if p.name.endswith(".zip.part")]
    part.write_bytes(data)  # as if killed after the download, before the extraction
    assert fetch_beir("tiny", tmp_path, base_url=server.url, archives=archives).status == (
        "installed"
    )
    assert server.log[-1].status == 416


def test_a_checksum_mismatch_installs_nothing_and_keeps_the_file_aside(
    serve, tmp_path: Path
) -> None:
    data = beir_zip("tiny")
    server = serve({"tiny.zip": data})
    wrong = registry_of(tiny=b"some other archive")
    with pytest.raises(DatasetError) as info:
        fetch_beir("tiny", tmp_path, base_url=server.url, archives=wrong)
    message = str(info.value)
    assert f"has MD5 {md5(data)}, not the published {md5(b'some other archive')}" in message
    assert "nothing was installed" in message
    assert not (tmp_path / "tiny").exists()
    rejected = tmp_path / ".tiny.zip.rejected"
    assert rejected.read_bytes() == data
    assert str(rejected) in message
    assert leftovers(tmp_path) == [".tiny.zip.rejected"]


def _corrupt_second_member(data: bytes) -> bytes:
    """Flip a byte inside the stored (uncompressed) queries file: its CRC no longer matches."""
    at = data.index(b'{"_id": "q2"')
    return data[:at] + b"X" + data[at + 1 :]


def test_an_extraction_that_fails_midway_leaves_no_folder(serve, tmp_path: Path) -> None:
    data = _corrupt_second_member(beir_zip("tiny", stored=True))
    server = serve({"tiny.zip": data})
    events: list[tuple[str, int, int]] = []
    with pytest.raises(DatasetError, match="not a readable zip archive"):
        fetch_beir(
            "tiny",
            tmp_path,
            base_url=server.url,
            archives=registry_of(tiny=data),
            progress=lambda *e: events.append(e),
        )
    # The corpus was extracted before the failure, into a staging folder now removed.
    extracted = [done for stage, done, _ in events if stage == "extracting tiny"]
    assert extracted and extracted[-1] > 0
    assert not (tmp_path / "tiny").exists()
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]


def test_an_archive_without_the_beir_layout_installs_nothing(serve, tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("tiny/corpus.jsonl", "{}\n")
    data = buffer.getvalue()
    server = serve({"tiny.zip": data})
    with pytest.raises(DatasetError, match="holds no BEIR task folder"):
        fetch_beir("tiny", tmp_path, base_url=server.url, archives=registry_of(tiny=data))
    assert not (tmp_path / "tiny").exists()
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]


def test_an_archive_member_escaping_the_folder_is_refused(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("../evil.txt", "x")
    archive = tmp_path / "evil.zip"
    archive.write_bytes(buffer.getvalue())
    with pytest.raises(DatasetError, match="points outside the archive"):
        fetch_beir("evil", tmp_path / "data", source=str(archive))
    assert not (tmp_path / "evil.txt").exists()


def test_an_existing_folder_is_kept_unless_forced(serve, tmp_path: Path) -> None:
    data = beir_zip("tiny")
    server = serve({"tiny.zip": data})
    archives = registry_of(tiny=data)
    fetch_beir("tiny", tmp_path, base_url=server.url, archives=archives)
    marker = tmp_path / "tiny" / "mine.txt"
    marker.write_text("kept")
    requests = len(server.log)

    again = fetch_beir("tiny", tmp_path, base_url=server.url, archives=archives)
    assert again.status == "present"
    assert marker.read_text() == "kept"
    assert len(server.log) == requests  # nothing downloaded

    forced = fetch_beir("tiny", tmp_path, base_url=server.url, archives=archives, force=True)
    assert forced.status == "installed"
    assert not marker.exists()
    assert (tmp_path / "tiny" / "corpus.jsonl").is_file()
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name or ".old-" in p.name]


def test_an_incomplete_existing_folder_is_not_overwritten_without_force(tmp_path: Path) -> None:
    (tmp_path / "scifact").mkdir()
    (tmp_path / "scifact" / "notes.txt").write_text("mine")
    with pytest.raises(DatasetError, match="not a complete task folder; pass --force"):
        fetch_beir("scifact", tmp_path)
    assert (tmp_path / "scifact" / "notes.txt").read_text() == "mine"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_unreachable_server_is_one_line_naming_the_url_and_the_way_out(tmp_path: Path) -> None:
    base = f"http://127.0.0.1:{_closed_port()}"
    with pytest.raises(DatasetError) as info:
        fetch_beir("scifact", tmp_path, base_url=base)
    message = str(info.value)
    assert message.startswith(f"cannot reach {base}/scifact.zip: ")
    assert message.endswith("download the archive yourself and pass --from FILE")
    assert "\n" not in message
    assert not (tmp_path / "scifact").exists()


def test_from_file_checks_a_known_name_and_records_an_unknown_one(tmp_path: Path) -> None:
    data = beir_zip("tiny", nested=False)  # files at the archive's top
    archive = tmp_path / "tiny.zip"
    archive.write_bytes(data)
    root = tmp_path / "data"
    # scifact is listed: the file must match BEIR's published MD5; it is left where it is.
    with pytest.raises(DatasetError, match=f"it is kept at {re.escape(str(archive))}"):
        fetch_beir("scifact", root, source=str(archive))
    assert archive.exists() and not (root / "scifact").exists()

    result = fetch_beir("my-set", root, source=str(archive))
    assert result.status == "installed"
    assert result.record is not None and result.record.verified_md5 is None
    assert result.record.sha256 == hashlib.sha256(data).hexdigest()
    assert "no published checksum" in result.warnings[0]
    assert result.record.sha256 in result.warnings[0]
    assert archive.exists()  # a user's file is never moved or deleted
    assert load_task("my-set", root).n_queries == 2


def test_unknown_names_suggest_close_ones_and_bad_names_are_refused(tmp_path: Path) -> None:
    with pytest.raises(UnknownNameError, match="Did you mean: scifact"):
        fetch_beir("scifcat", tmp_path)
    with pytest.raises(DatasetError, match="not a plain folder name"):
        fetch_beir("../up", tmp_path, source=str(tmp_path / "x.zip"))
    assert list(tmp_path.iterdir()) == []


def test_the_registry_holds_published_md5s_and_the_default_url_is_beirs() -> None:
    assert ARCHIVES.get("scifact").md5 == "5f7d1de60b170fc8027bb7898e2efca1"
    assert ARCHIVES.get("nfcorpus").md5 == "a89dba18a62ef92f7d323ec890a0d38d"
    assert all(re.fullmatch(r"[0-9a-f]{32}", ARCHIVES.get(n).md5) for n in ARCHIVES)
    assert "cqadupstack" not in ARCHIVES
    assert archive_url("scifact") == f"{BASE_URL}/scifact.zip"


def test_default_folders_follow_the_environment(tmp_path: Path, monkeypatch) -> None:
    from embedding_ttc.tasks import catalog

    monkeypatch.delenv("EMBEDDING_TTC_DATA", raising=False)
    monkeypatch.setattr(catalog, "_shared_candidates", lambda: [])
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert user_data_dir() == tmp_path / "xdg" / "embedding-ttc" / "datasets"
    assert default_fetch_dir() == user_data_dir()  # no data root yet: the user data folder
    # with a data root in effect, fetched datasets go under it, where every command reads
    shared = tmp_path / "shared" / "datasets"
    shared.mkdir(parents=True)
    monkeypatch.setattr(catalog, "_shared_candidates", lambda: [shared])
    assert default_fetch_dir() == shared
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")
    assert user_data_dir() == Path.home() / ".local" / "share" / "embedding-ttc" / "datasets"
    monkeypatch.setenv("EMBEDDING_TTC_DATA", str(tmp_path / "data"))
    assert default_fetch_dir() == tmp_path / "data"


def test_fetchable_names_leave_out_what_is_there(tmp_path: Path) -> None:
    (tmp_path / "scifact").mkdir()
    names = fetchable_names(tmp_path)
    assert "scifact" not in names
    assert names == [n for n in ARCHIVES.names() if n != "scifact"]
    assert fetchable_names(None) == ARCHIVES.names()


def test_cli_fetch_from_a_url_and_the_tasks_listing(serve, tmp_path: Path, capsys) -> None:
    data = beir_zip("tiny")
    server = serve({"tiny.zip": data})
    root = tmp_path / "data"
    argv = ["data", "fetch", "tiny", "--from", f"{server.url}/tiny.zip", "--to", str(root)]
    assert main([*argv, "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == str(root / "tiny")
    assert "warning: tiny has no published checksum" in err

    assert main(["tasks", "--json", "--data-dir", str(root)]) == 0
    listing = json.loads(capsys.readouterr().out)
    listed = {t["task"]: t["origin"] for t in listing["tasks"]}
    assert listed["tiny"] == "data root"  # the packaged tasks are listed beside it
    assert listing["fetchable"] == ARCHIVES.names()


def test_cli_a_mismatched_scifact_from_another_server_exits_2(
    serve, tmp_path: Path, capsys, monkeypatch
) -> None:
    server = serve({"scifact.zip": beir_zip("scifact")})
    monkeypatch.setenv("EMBEDDING_TTC_BEIR_URL", server.url)  # the --base-url default
    root = tmp_path / "data"
    assert main(["data", "fetch", "scifact", "--to", str(root), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "not the published 5f7d1de60b170fc8027bb7898e2efca1" in err
    assert not (root / "scifact").exists()
    assert server.log[-1].path == "/scifact.zip"
