"""The transfer manifest as a typed record: the committed one reads, and writes back the same."""

import json
from pathlib import Path

import pytest

from embedding_ttc.analysis.inputs import ReportError
from embedding_ttc.analysis.manifest import MANIFEST, read_manifest

COMMITTED = Path(__file__).resolve().parents[2] / "results" / "transfer" / MANIFEST


def test_the_committed_manifest_reads_and_dumps_to_the_same_bytes():
    text = COMMITTED.read_text(encoding="utf-8")
    manifest = read_manifest(COMMITTED.parent)
    assert manifest is not None and manifest.schema_version == 1
    assert manifest.discovery_encoder == "all-MiniLM-L6-v2"
    assert manifest.shortlist == {"*": None, "medquad": 30}
    assert json.dumps(manifest.model_dump(mode="json"), indent=2) + "\n" == text


def test_an_older_manifest_without_later_fields_still_reads(tmp_path):
    body = json.loads(COMMITTED.read_text(encoding="utf-8"))
    later_fields = ("discovery_encoder", "shortlist", "sample_queries", "search_run")
    for later in (*later_fields, "program_files", "search_programs"):
        del body[later]
    (tmp_path / MANIFEST).write_text(json.dumps(body), encoding="utf-8")
    manifest = read_manifest(tmp_path)
    assert manifest is not None and manifest.search_run is None and manifest.shortlist is None
    assert manifest.program_files == [] and manifest.search_programs is None


@pytest.mark.parametrize(
    "change, message",
    [
        ({"schema_version": 2}, "schema_version"),
        ({"surprise": 1}, "surprise"),
        ({"kind": "transfer_cell"}, "kind 'transfer_manifest'"),
    ],
)
def test_a_manifest_of_another_shape_is_an_error_naming_the_file(tmp_path, change, message):
    body = {**json.loads(COMMITTED.read_text(encoding="utf-8")), **change}
    (tmp_path / MANIFEST).write_text(json.dumps(body), encoding="utf-8")
    with pytest.raises(ReportError, match=message) as caught:
        read_manifest(tmp_path)
    assert str(tmp_path / MANIFEST) in str(caught.value)
