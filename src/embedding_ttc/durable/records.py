"""JSONL records appended one whole line at a time, and read back by record type.

Every record the project appends (ledgers, run logs, result streams) goes through these
functions, so a kill at any moment leaves whole lines and at most one torn final line:

* :func:`append_record` appends one record as one line, flushed and fsynced. A final line
  without its newline, the only thing a kill during an append can leave, is cut off first, so
  the new line never lands glued to a torn one.
* :func:`read_records` reads a JSONL file of one record type. Blank lines are skipped, a torn
  final line is skipped (the file is not touched: reading never writes), and any other line
  that is not a valid record is an error naming the file and the line.
* :func:`refuse_other_schema` is the ``model_validator(mode="before")`` check of a versioned
  record: a record of another schema (older ones are not read) is refused by its number.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from embedding_ttc.errors import EmbeddingTTCError

RecordT = TypeVar("RecordT", bound=BaseModel)


def refuse_other_schema(data: Any, current: int, what: str) -> Any:
    """``data`` unchanged, unless it declares a ``schema_version`` other than ``current``.

    The package reads each record in its current schema only; the files committed before
    0.1.0 in older ones were rewritten once (``scripts/migrate_0_1_records.py``).

    Raises:
        ValueError: naming ``what`` the record is, the schema it declares and the one read.

    """
    if isinstance(data, dict):
        version = data.get("schema_version", current)
        if version != current:
            raise ValueError(
                f"{what} of schema {version!r} is not read: only schema {current} is "
                "(scripts/migrate_0_1_records.py rewrote the older files committed before 0.1.0)"
            )
    return data


def cut_torn_tail(path: Path) -> bool:
    """Cut a final line that lacks its newline (a kill during an append), durably.

    Returns whether anything was cut. A missing or empty file is left alone.
    """
    if not path.is_file():
        return False
    with open(path, "r+b") as fh:
        size = fh.seek(0, os.SEEK_END)
        if size == 0:
            return False
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return False
        # Scan back in blocks for the last newline; everything after it is the torn line.
        keep = 0
        pos = size
        while pos > 0:
            start = max(0, pos - (1 << 16))
            fh.seek(start)
            found = fh.read(pos - start).rfind(b"\n")
            if found >= 0:
                keep = start + found + 1
                break
            pos = start
        fh.truncate(keep)
        fh.flush()
        os.fsync(fh.fileno())
    return True


def append_record(path: Path, record: BaseModel) -> None:
    """Append ``record`` to the JSONL file ``path`` as one line, flushed and fsynced."""
    path.parent.mkdir(parents=True, exist_ok=True)
    cut_torn_tail(path)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(record.model_dump_json() + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def read_records(
    path: Path,
    model: type[RecordT],
    error: type[EmbeddingTTCError],
    what: str,
) -> list[RecordT]:
    """Every ``model`` record in the JSONL file ``path`` (none when it is absent), in order.

    Args:
        path: the JSONL file.
        model: the record type of every line.
        error: the error type raised for a malformed line.
        what: what a line should be, for the message (``a ledger record``).

    Raises:
        error: ``<path>:<line>: not <what> (<reason>)`` for a malformed line other than a
            torn final one.

    """
    if not path.is_file():
        return []
    data = path.read_bytes()
    lines = data.split(b"\n")
    torn_at = len(lines) if data and not data.endswith(b"\n") else None
    records: list[RecordT] = []
    for number, raw in enumerate(lines, start=1):
        if number == torn_at:
            break
        if not raw.strip():
            continue
        try:
            records.append(model.model_validate_json(raw))
        except ValidationError as exc:
            raise error(f"{path}:{number}: not {what} ({_reason(exc)})") from None
    return records


def _reason(exc: ValidationError) -> str:
    """The first few problems of a validation error, each as ``field: message``."""
    problems = [f"{'.'.join(map(str, e['loc'])) or 'line'}: {e['msg']}" for e in exc.errors()[:3]]
    more = len(exc.errors()) - len(problems)
    return "; ".join(problems) + (f"; and {more} more" if more > 0 else "")
