"""Hand-made GGUF files (little-endian headers, v3 unless asked), shared by the GGUF tests."""

from __future__ import annotations

import struct

FAKE_NAME = "Fake Coder 0.1B Instruct GGUF"


def gstr(text: str) -> bytes:
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def kv(key: str, kind: int, payload: bytes) -> bytes:
    return gstr(key) + struct.pack("<I", kind) + payload


def header(*pairs: bytes, version: int = 3, tensors: int = 0) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", version, tensors, len(pairs)) + b"".join(pairs)


def name_header(name: str = FAKE_NAME) -> bytes:
    """Several value types (scalars, a string array, a nested array) before general.name."""
    return header(
        kv("general.architecture", 8, gstr("qwen2")),
        kv("qwen2.context_length", 4, struct.pack("<I", 32768)),
        kv("qwen2.rope.freq_base", 6, struct.pack("<f", 1e6)),
        kv("general.quantized", 7, b"\x01"),
        kv("general.size", 10, struct.pack("<Q", 123)),
        kv(
            "tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, 3) + gstr("a") + gstr("bb") + gstr("")
        ),
        kv("tokenizer.ggml.scores", 9, struct.pack("<IQ", 6, 2) + struct.pack("<2f", 0.5, 1.5)),
        kv(
            "nested",
            9,
            struct.pack("<IQ", 9, 2)
            + struct.pack("<IQ", 0, 3)
            + b"xyz"
            + struct.pack("<IQ", 8, 1)
            + gstr("deep"),
        ),
        kv("general.name", 8, gstr(name)),
        kv("general.after", 12, struct.pack("<d", 2.0)),
    )
