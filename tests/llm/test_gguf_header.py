"""The GGUF header reader: every value type skipped to the wanted string, malformed files named."""

from __future__ import annotations

import struct

import pytest

from embedding_ttc.llm.gguf_header import GGUFHeaderError, read_general_name, read_metadata_string

from .gguf_files import gstr, header, kv, name_header


def test_header_reader_skips_every_value_type_to_the_name(tmp_path):
    path = tmp_path / "h.gguf"
    path.write_bytes(name_header("Qwen2.5 Coder ✓") + b"\0" * 64)
    assert read_general_name(path) == "Qwen2.5 Coder ✓"
    assert read_metadata_string(path, "general.architecture") == "qwen2"
    assert read_metadata_string(path, "general.absent") is None


def test_header_reader_accepts_version_2(tmp_path):
    path = tmp_path / "v2.gguf"
    path.write_bytes(header(kv("general.name", 8, gstr("v2 model")), version=2))
    assert read_general_name(path) == "v2 model"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"GGML" + b"\0" * 40, "not a GGUF file"),
        (b"GG", "not a GGUF file"),
        (header(version=1), "version 1 is not supported"),
        (header(kv("general.name", 8, gstr("x")))[:-1], "runs past the end"),
        (header(kv("general.name", 4, struct.pack("<I", 7))), "not a string"),
        (header(kv("odd", 13, b"")), "unknown GGUF value type 13"),
        (header(kv("big", 9, struct.pack("<IQ", 10, 2**40))), "runs past the end"),
        (header(kv("general.name", 8, struct.pack("<Q", 2) + b"\xff\xfe")), "not UTF-8"),
        (b"GGUF" + struct.pack("<IQQ", 3, 0, 5), "truncated"),
    ],
)
def test_header_reader_rejects_malformed_files(tmp_path, data, message):
    path = tmp_path / "bad.gguf"
    path.write_bytes(data)
    with pytest.raises(GGUFHeaderError, match=message):
        read_general_name(path)
