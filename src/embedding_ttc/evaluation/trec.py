r"""TREC run files: ``qid Q0 docid rank score run_tag``, one line per retrieved document.

TREC fields are whitespace-separated, so an id containing whitespace (or ``%``) is escaped by
percent-encoding those characters (``" "`` -> ``%20``, ``"\t"`` -> ``%09``, ``"%"`` -> ``%25``);
:func:`unescape_id` reverses it. Ids without whitespace or ``%`` are written unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import unquote

from embedding_ttc.durable import replacing

_NEEDS_ESCAPE = re.compile(r"[\s%]")


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
