"""Read document records from a corpus file: the one place that knows the accepted shapes.

Shapes, and how one is chosen (per file, never guessed line by line):

* explicit fields (``--id-field``, ``--text-field``, ``--title-field``): used as given, for
  any JSONL shape; an unset id field means ``_id`` (or ``id``), an unset title means none;
* otherwise the **first record** decides: a record with ``contents`` and no ``text`` makes the
  file Pyserini's shape (``id``, ``contents``; no title), anything else is BEIR's shape
  (``_id`` or ``id``, ``title`` optional and possibly empty, ``text``);
* a file whose name ends in ``.tsv`` is ``id<TAB>text`` or ``id<TAB>title<TAB>text`` per row
  (an optional header row ``id text`` or ``id title text``).

A record without its text field, with an empty text or with a non-string field, and a JSONL
line that is not a JSON object ("docs.jsonl: line 151 is not valid JSON: unterminated string
starting at column 1250") is an error naming the file, line and problem; with
``skip_invalid`` it is skipped and counted instead.
"""

from __future__ import annotations

import csv
import gzip
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from embedding_ttc.errors import DatasetError
from embedding_ttc.tasks.jsonl import open_text
from embedding_ttc.tasks.task import join_title_text


@dataclass(frozen=True)
class Document:
    """One corpus document: its id, title (possibly empty) and text."""

    id: str
    title: str
    text: str

    @property
    def joined(self) -> str:
        """Title and text joined as the encoder sees them (as MTEB joins them)."""
        return join_title_text(self.title, self.text)


@dataclass(frozen=True)
class RecordFields:
    """Which JSON fields hold a record's id, title and text.

    Attributes:
        id: the id field; ``None`` means ``_id``, else ``id``.
        text: the text field.
        title: the title field; ``None`` means the records have no title.
        shape: the shape's name, for messages (``beir``, ``pyserini``, ``custom``).

    """

    id: str | None
    text: str
    title: str | None
    shape: str


BEIR = RecordFields(id=None, text="text", title="title", shape="beir")
PYSERINI = RecordFields(id="id", text="contents", title=None, shape="pyserini")


@dataclass(frozen=True)
class CorpusFile:
    """The documents read from a corpus file and how many invalid records were skipped."""

    documents: list[Document]
    skipped: int


class InvalidRecord(DatasetError):
    """A record that cannot be a document (skippable with ``skip_invalid``)."""


def choose_fields(
    first: Mapping[str, Any],
    id_field: str | None = None,
    text_field: str | None = None,
    title_field: str | None = None,
) -> RecordFields:
    """The fields of a JSONL corpus: the explicit ones, else decided by its first record."""
    if text_field or id_field or title_field:
        # With --text-field given, a title comes only from --title-field: nothing is guessed.
        base = BEIR if text_field else choose_fields(first)
        return RecordFields(
            id=id_field or base.id,
            text=text_field or base.text,
            title=title_field or (None if text_field else base.title),
            shape="custom",
        )
    if "contents" in first and "text" not in first:
        return PYSERINI
    return BEIR


def _record_id(obj: Mapping[str, Any], fields: RecordFields, where: str) -> str:
    if fields.id is None:
        name, rid = ("_id", obj["_id"]) if "_id" in obj else ("id", obj.get("id"))
        label = "'_id' (or 'id')"
    else:
        name, rid, label = fields.id, obj.get(fields.id), repr(fields.id)
    if isinstance(rid, int) and not isinstance(rid, bool):
        rid = str(rid)
    if not isinstance(rid, str) or not rid:
        problem = "absent" if name not in obj else "not a non-empty string or integer"
        raise DatasetError(f"{where}: missing or invalid id field {label} ({problem})")
    return rid


def document_from_record(obj: Mapping[str, Any], fields: RecordFields, where: str) -> Document:
    """One document from one JSON record; ``where`` (``file:line``) heads every error.

    Raises:
        InvalidRecord: a missing, non-string or empty text, or a non-string title.
        DatasetError: a missing or invalid id (never skipped: ids are how documents are found).

    """
    rid = _record_id(obj, fields, where)
    if fields.text not in obj:
        present = ", ".join(sorted(map(str, obj))) or "none"
        raise InvalidRecord(
            f"{where}: no text field {fields.text!r} ({fields.shape} shape; fields present: "
            f"{present}; name the text field with --text-field)"
        )
    text = obj[fields.text]
    if not isinstance(text, str):
        raise InvalidRecord(f"{where}: field {fields.text!r} must be a string")
    if not text.strip():
        raise InvalidRecord(f"{where}: field {fields.text!r} is empty")
    title = obj.get(fields.title) if fields.title else ""
    if title is None:
        title = ""
    if not isinstance(title, str):
        raise InvalidRecord(f"{where}: field {fields.title!r} must be a string")
    return Document(rid, title, text)


def _json_line(line: str, path: Path, lineno: int) -> dict[str, Any] | InvalidRecord:
    """One JSONL line's object, or what is wrong with it, in words."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        reason = exc.msg.removesuffix(" at")
        reason = reason[:1].lower() + reason[1:]
        return InvalidRecord(
            f"{path}: line {lineno} is not valid JSON: {reason} at column {exc.colno}"
        )
    if not isinstance(obj, dict):
        return InvalidRecord(
            f"{path}: line {lineno} is not a JSON object (a {type(obj).__name__} instead)"
        )
    return obj


def _json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any] | InvalidRecord]]:
    """``(line number, object or what is wrong with the line)`` per non-blank line."""
    with open_text(path) as fh:
        try:
            for lineno, line in enumerate(fh, 1):
                line = line.rstrip("\r\n")
                if line.strip():
                    yield lineno, _json_line(line, path, lineno)
        except (UnicodeDecodeError, EOFError, gzip.BadGzipFile) as exc:
            raise DatasetError(f"{path}: unreadable ({exc})") from None


def _jsonl_records(
    path: Path, id_field: str | None, text_field: str | None, title_field: str | None
) -> Iterator[tuple[str, Document | InvalidRecord]]:
    fields: RecordFields | None = None
    for lineno, obj in _json_lines(path):
        if isinstance(obj, InvalidRecord):
            yield f"{path}:{lineno}", obj
            continue
        if fields is None:
            fields = choose_fields(obj, id_field, text_field, title_field)
        where = f"{path}:{lineno}"
        try:
            yield where, document_from_record(obj, fields, where)
        except InvalidRecord as exc:
            yield where, exc


_TSV_HEADERS = (["id", "text"], ["id", "title", "text"])


def _tsv_records(path: Path) -> Iterator[tuple[str, Document | InvalidRecord]]:
    with open(path, encoding="utf-8", newline="") as fh:
        for lineno, row in enumerate(csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE), 1):
            where = f"{path}:{lineno}"
            if not row or not "".join(row).strip():
                continue
            if lineno == 1 and row in _TSV_HEADERS:
                continue
            if len(row) not in (2, 3) or not row[0]:
                raise DatasetError(
                    f"{where}: expected id<TAB>text or id<TAB>title<TAB>text, "
                    f"got {len(row)} field(s)"
                )
            title, text = ("", row[1]) if len(row) == 2 else (row[1], row[2])
            if not text.strip():
                yield where, InvalidRecord(f"{where}: field 'text' (column {len(row)}) is empty")
            else:
                yield where, Document(row[0], title, text)


def read_corpus_file(
    path: Path | str,
    *,
    id_field: str | None = None,
    text_field: str | None = None,
    title_field: str | None = None,
    skip_invalid: bool = False,
) -> CorpusFile:
    """Read a corpus file's documents; see the module docstring for the shapes.

    Args:
        path: a JSONL (``.jsonl``, ``.jsonl.gz``) or TSV (``.tsv``) file.
        id_field: the JSON id field (default ``_id``, else ``id``; Pyserini's: ``id``).
        text_field: the JSON text field (default by the first record: ``text`` or ``contents``).
        title_field: the JSON title field (default ``title`` in BEIR's shape, else none).
        skip_invalid: skip and count records without text, and lines that are not JSON
            objects, instead of refusing the file.

    Raises:
        DatasetError: naming the file, line and field of a bad record, a missing file, or
            explicit fields given for a TSV file.

    """
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"corpus file {path} does not exist")
    if path.name.endswith(".tsv"):
        if id_field or text_field or title_field:
            raise DatasetError(f"{path}: field names apply to JSONL corpora, not TSV")
        records = _tsv_records(path)
    else:
        records = _jsonl_records(path, id_field, text_field, title_field)
    docs: list[Document] = []
    skipped = 0
    for _, item in records:
        if isinstance(item, Document):
            docs.append(item)
        elif skip_invalid:
            skipped += 1
        else:
            raise item
    return CorpusFile(docs, skipped)
