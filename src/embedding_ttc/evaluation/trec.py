r"""TREC run files: ``qid Q0 docid rank score run_tag``, one line per retrieved document.

Writing. TREC fields are whitespace-separated, so an id containing whitespace (or ``%``) is
escaped by percent-encoding those characters (``" "`` -> ``%20``, ``"\t"`` -> ``%09``, ``"%"``
-> ``%25``); :func:`unescape_id` reverses it. Ids without whitespace or ``%`` are written
unchanged.

Reading (:func:`read_run`), as trec_eval reads a run (``get_trec_results.c``), with the
conventions of the tools that write runs:

* fields are separated by any run of whitespace (spaces or tabs; ``\r\n`` line ends too);
  blank lines and lines starting with ``#`` are skipped (trec_eval skips both);
* a line has exactly six fields. trec_eval ignores fields after the sixth, but the usual cause
  of a seventh is an id holding a space written unescaped (Pyserini's and Anserini's writers,
  ranx, ir_measures and pytrec_eval's ``parse_run`` all write or split ids as they are, so such
  an id cannot survive a round trip): the line is refused rather than read as another id;
* PyTerrier writes runs with pandas' ``to_csv(sep=" ")``, which puts an id holding a space or
  a ``"`` in double quotes (``"doc 1"``), a quote inside written twice, and reads them back
  with ``read_csv``: a field that opens with ``"`` is read the same way;
* this package's own runs percent-encode whitespace and ``%`` (above). A field is not decoded
  here, because an id may hold a ``%`` of its own (a URL); the caller that knows the ids tries
  the field as written first, then decoded (:mod:`~embedding_ttc.evaluation.first_stage_run`);
* the rank must be an integer and the score a finite number; the ``Q0`` field and the run tag
  are not checked (trec_eval ignores both but the last tag);
* a (query, document) pair given twice is an error, as in trec_eval (``form_res_rels``);
* the file may be gzip-compressed (``.gz``, as PyTerrier and ir_datasets read them) and may
  start with a UTF-8 byte-order mark.

Every error names the file and the line.
"""

from __future__ import annotations

import gzip
import hashlib
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from embedding_ttc.durable import replacing
from embedding_ttc.errors import EmbeddingTTCError

_NEEDS_ESCAPE = re.compile(r"[\s%]")
# A field: double-quoted as csv writes it (quotes inside doubled) and ending at whitespace or
# at the end of the line, else a run of non-whitespace.
_FIELD = re.compile(r'"((?:[^"]|"")*)"(?=\s|$)|(\S+)')
FIELDS = "qid Q0 docid rank score tag"


class RunFileError(EmbeddingTTCError):
    """A run file cannot be read (the message names the file and the line)."""


def escape_id(identifier: str) -> str:
    """Percent-encode whitespace and ``%`` so the id is one TREC field."""
    if not _NEEDS_ESCAPE.search(identifier):
        return identifier
    return _NEEDS_ESCAPE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), identifier)


def unescape_id(field: str) -> str:
    """Reverse :func:`escape_id`."""
    return unquote(field) if "%" in field else field


def format_run(rankings: Iterable[tuple[str, list[str], list[float]]], tag: str) -> Iterable[str]:
    """Lines of a run file from ``(query id, ranked doc ids, scores)``; ranks start at 1."""
    tag = escape_id(tag)
    for qid, doc_ids, scores in rankings:
        q = escape_id(qid)
        for rank, (doc, score) in enumerate(zip(doc_ids, scores, strict=True), 1):
            yield f"{q} Q0 {escape_id(doc)} {rank} {score:.8g} {tag}\n"


def write_run(path: Path, rankings: Iterable[tuple[str, list[str], list[float]]], tag: str) -> None:
    """Write a run file atomically: a uniquely named temporary file, fsynced, then renamed."""
    with replacing(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.writelines(format_run(rankings, tag))


@dataclass(frozen=True)
class RunLine:
    """One retrieved document of a run file, its id fields as written (quotes removed)."""

    qid: str
    docid: str
    rank: int
    score: float
    line: int


@dataclass(frozen=True)
class RunFile:
    """A run file read whole: its lines in file order, and the SHA-256 of its bytes."""

    path: Path
    sha256: str
    lines: tuple[RunLine, ...]


def split_fields(text: str) -> list[str]:
    """The whitespace-separated fields of a line, a double-quoted field unquoted."""
    out = []
    for m in _FIELD.finditer(text):
        quoted = m.group(1)
        out.append(quoted.replace('""', '"') if quoted is not None else m.group(2))
    return out


def _parse_line(text: str, where: str) -> tuple[str, str, int, float]:
    fields = split_fields(text)
    if len(fields) != 6:
        hint = (
            "; an id holding whitespace must be percent-encoded (%20) or double-quoted"
            if len(fields) > 6
            else ""
        )
        raise RunFileError(f"{where}: expected 6 fields ({FIELDS}), found {len(fields)}{hint}")
    qid, _q0, docid, rank_field, score_field, _tag = fields
    try:
        rank = int(rank_field)
    except ValueError:
        raise RunFileError(f"{where}: rank {rank_field!r} is not an integer") from None
    try:
        score = float(score_field)
    except ValueError:
        raise RunFileError(f"{where}: score {score_field!r} is not a number") from None
    if not math.isfinite(score):
        raise RunFileError(f"{where}: score {score_field!r} is not finite")
    return qid, docid, rank, score


def _text(path: Path) -> tuple[str, str]:
    """The file's text and the SHA-256 of its bytes as stored (compressed if it is)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RunFileError(f"{path}: cannot read the run file ({exc.strerror or exc})") from None
    digest = hashlib.sha256(data).hexdigest()
    if path.suffix == ".gz":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise RunFileError(f"{path}: not a gzip file ({exc})") from None
    try:
        return data.decode("utf-8-sig"), digest
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise RunFileError(f"{path}:{line}: not UTF-8 text") from None


def read_run(path: Path | str) -> RunFile:
    """Read a TREC run file (see the module docstring for the format and its conventions).

    Raises:
        RunFileError: ``<path>:<line>: <problem>`` for a malformed line or a (query, document)
            pair given twice; ``<path>: ...`` for a file that cannot be read or holds no line.

    """
    path = Path(path)
    text, digest = _text(path)
    lines: list[RunLine] = []
    first: dict[tuple[str, str], int] = {}
    for number, raw in enumerate(text.split("\n"), start=1):
        body = raw.strip()
        if not body or body.startswith("#"):
            continue
        where = f"{path}:{number}"
        qid, docid, rank, score = _parse_line(body, where)
        seen = first.setdefault((qid, docid), number)
        if seen != number:
            raise RunFileError(
                f"{where}: document {docid!r} is given twice for query {qid!r} "
                f"(first at line {seen})"
            )
        lines.append(RunLine(qid, docid, rank, score, number))
    if not lines:
        raise RunFileError(f"{path}: the run file holds no line ({FIELDS})")
    return RunFile(path, digest, tuple(lines))
