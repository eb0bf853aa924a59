"""Reading JSONL files, gzipped or not, line by line with their line numbers.

Every reader of records (task folders, corpus files, generated tasks) reads through
:func:`iter_jsonl`, so a broken line is reported the same way everywhere: file, line, reason.
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from embedding_ttc.errors import DatasetError, json_error_detail


def open_text(path: Path) -> io.TextIOBase:
    """A (gzipped) UTF-8 text file, opened for reading."""
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8")
    return open(path, encoding="utf-8")


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for each non-blank line of a (gzipped) JSONL file."""
    with open_text(path) as fh:
        try:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    detail = json_error_detail(exc, line=False)
                    raise DatasetError(f"{path}:{lineno}: not valid JSON ({detail})") from None
                if not isinstance(obj, dict):
                    raise DatasetError(f"{path}:{lineno}: expected a JSON object")
                yield lineno, obj
        except (UnicodeDecodeError, EOFError, gzip.BadGzipFile) as exc:
            raise DatasetError(f"{path}: unreadable ({exc})") from None
