"""Load a task folder in BEIR layout (plain or gzipped JSONL), full-corpus or pool.

A folder holds ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl`` (``_id``,
``text``), ``qrels/test.tsv`` (``query-id corpus-id score``, header optional) and optionally
``STATS.json``. When ``STATS.json`` says ``"pool": true`` each query ranks only its own candidate
pool: exactly that query's rows in the qrels, explicit ``0`` labels included.
``"exclude_self_hits": true`` in ``STATS.json`` removes a document whose id equals the query id
from that query's ranking (MTEB's rule for ArguAna).

What counts as an error and what as a counted warning:

* errors (file and line named): a missing file, a line that is not a JSON object, a missing or
  non-string ``_id``, a corpus record without a ``text`` field (a title may be absent), a
  duplicate id, a qrels row without three fields or with a non-integer
  grade, a query id judged twice for the same document;
* counted warnings (the data stays usable): qrels rows naming unknown corpus or query ids
  (dropped), documents with empty text (kept: they exist in the source collection), queries with
  empty text (dropped), queries without any judgement (not evaluated, as in pytrec_eval).
"""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path
from typing import Any

from embedding_ttc.errors import DatasetError, json_error_detail
from embedding_ttc.tasks.jsonl import iter_jsonl, open_text
from embedding_ttc.tasks.judgements import evaluable_queries, join_judgements
from embedding_ttc.tasks.task import RetrievalTask


def find_file(folder: Path, stem: str) -> Path:
    """``folder/stem`` or ``folder/stem.gz``, whichever exists; a clear error if neither."""
    for name in (stem, stem + ".gz"):
        path = folder / name
        if path.exists():
            return path
    raise DatasetError(f"task folder {folder} has no {stem} (or {stem}.gz)")


def _records(
    path: Path, fields: tuple[str, ...], required: str | None
) -> tuple[list[str], list[list[str]], int]:
    """Read ids and string fields; return ids, columns, and the number of empty texts.

    The ``required`` field, if any, must be present on every line (its value may be empty: counted).
    """
    ids: list[str] = []
    cols: list[list[str]] = [[] for _ in fields]
    seen: dict[str, int] = {}
    empty = 0
    for lineno, obj in iter_jsonl(path):
        rid = obj.get("_id")
        if isinstance(rid, int) and not isinstance(rid, bool):
            rid = str(rid)
        if not isinstance(rid, str) or not rid:
            raise DatasetError(f"{path}:{lineno}: missing or invalid '_id'")
        if rid in seen:
            raise DatasetError(f"{path}:{lineno}: duplicate id {rid!r} (first at line {seen[rid]})")
        seen[rid] = lineno
        if required is not None and required not in obj:
            present = ", ".join(sorted(map(str, obj))) or "none"
            raise DatasetError(
                f"{path}:{lineno}: no {required!r} field (fields present: {present}); "
                "a BEIR folder's records are _id, title (optional), text"
            )
        values = []
        for name in fields:
            value = obj.get(name, "")
            if value is None:
                value = ""
            if not isinstance(value, str):
                raise DatasetError(f"{path}:{lineno}: field {name!r} must be a string")
            values.append(value)
        if not "".join(values).strip():
            empty += 1
        ids.append(rid)
        for col, value in zip(cols, values, strict=True):
            col.append(value)
    return ids, cols, empty


def _qrels(path: Path) -> list[tuple[int, str, str, int]]:
    try:
        return _qrels_rows(path)
    except (UnicodeDecodeError, EOFError, gzip.BadGzipFile, csv.Error) as exc:
        raise DatasetError(f"{path}: unreadable ({exc})") from None


def _qrels_rows(path: Path) -> list[tuple[int, str, str, int]]:
    rows: list[tuple[int, str, str, int]] = []
    with open_text(path) as fh:
        for lineno, row in enumerate(csv.reader(fh, delimiter="\t"), 1):
            if not row or not "".join(row).strip():
                continue
            if len(row) == 4:  # TREC qrels: query-id, iteration, doc-id, grade
                row = [row[0], row[2], row[3]]
            if len(row) != 3:
                raise DatasetError(
                    f"{path}:{lineno}: expected 3 tab-separated fields "
                    f"(query-id, corpus-id, score), got {len(row)}"
                )
            qid, did, grade = (x.strip() for x in row)
            try:
                value = int(float(grade)) if "." in grade else int(grade)
            except ValueError:
                if lineno == 1:  # header row
                    continue
                raise DatasetError(f"{path}:{lineno}: grade {grade!r} is not an integer") from None
            rows.append((lineno, qid, did, value))
    return rows


def load_beir_folder(folder: Path | str, name: str | None = None) -> RetrievalTask:
    """Load the task in ``folder``; see the module docstring for the validation rules."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DatasetError(f"task folder {folder} does not exist")
    stats: dict[str, Any] = {}
    stats_path = folder / "STATS.json"
    if stats_path.exists():
        try:
            stats = json.loads(stats_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            detail = json_error_detail(exc)
            raise DatasetError(f"{stats_path}: not valid JSON ({detail})") from None
        except UnicodeDecodeError as exc:
            raise DatasetError(f"{stats_path}: unreadable ({exc})") from None
        if not isinstance(stats, dict):
            raise DatasetError(f"{stats_path}: expected a JSON object")
    pool = bool(stats.get("pool", False))

    corpus_path = find_file(folder, "corpus.jsonl")
    doc_ids, (titles, bodies), empty_docs = _records(corpus_path, ("title", "text"), "text")
    queries_path = find_file(folder, "queries.jsonl")
    q_ids, (q_texts,), _ = _records(queries_path, ("text",), None)
    qrels_path = find_file(folder / "qrels", "test.tsv")

    query_text = dict(zip(q_ids, q_texts, strict=True))
    rows = ((f"{qrels_path}:{n}", q, d, g) for n, q, d, g in _qrels(qrels_path))
    judged = join_judgements(rows, query_text, set(doc_ids))
    qrels, pools, warnings = judged.qrels, judged.pools, judged.warnings
    if empty_docs:
        warnings.append(f"{empty_docs} documents have empty text (kept)")
    kept = evaluable_queries(q_ids, query_text, judged, where=f"{folder} ({qrels_path})")

    return RetrievalTask(
        name=name or folder.name,
        doc_ids=doc_ids,
        doc_titles=titles,
        doc_bodies=bodies,
        query_ids=kept,
        query_texts=[query_text[q] for q in kept],
        qrels={q: qrels[q] for q in kept},
        pools={q: pools[q] for q in kept} if pool else None,
        exclude_self_hits=bool(stats.get("exclude_self_hits", False)),
        source="beir",
        metadata={"folder": str(folder), **stats},
        warnings=warnings,
    )


def _query_records(path: Path) -> tuple[list[str], list[str]]:
    """A queries file's ids and texts: JSONL (``_id`` or ``id``, ``text``) or TSV (id, text)."""
    if path.name.endswith((".tsv", ".tsv.gz")):
        ids, texts = [], []
        with open_text(path) as fh:
            for lineno, row in enumerate(csv.reader(fh, delimiter="\t"), 1):
                if not row or not "".join(row).strip():
                    continue
                if len(row) != 2:
                    raise DatasetError(
                        f"{path}:{lineno}: expected 2 tab-separated fields (id, text), "
                        f"got {len(row)}"
                    )
                ids.append(row[0].strip())
                texts.append(row[1])
        return ids, texts
    ids, texts, seen = [], [], set()
    for lineno, obj in iter_jsonl(path):
        rid = obj.get("_id", obj.get("id"))
        if isinstance(rid, int) and not isinstance(rid, bool):
            rid = str(rid)
        if not isinstance(rid, str) or not rid:
            raise DatasetError(f"{path}:{lineno}: missing or invalid '_id' (or 'id')")
        if rid in seen:
            raise DatasetError(f"{path}:{lineno}: duplicate query id {rid!r}")
        text = obj.get("text")
        if not isinstance(text, str):
            present = ", ".join(sorted(map(str, obj))) or "none"
            raise DatasetError(
                f"{path}:{lineno}: no string 'text' field (fields present: {present})"
            )
        seen.add(rid)
        ids.append(rid)
        texts.append(text)
    return ids, texts


def load_judged_files(
    name: str,
    corpus: Path | str,
    queries: Path | str,
    qrels: Path | str,
    *,
    id_field: str | None = None,
    text_field: str | None = None,
    title_field: str | None = None,
    skip_invalid: bool = False,
) -> RetrievalTask:
    """A task from three files: a corpus read as ``index build`` reads one, queries, judgements.

    Args:
        name: the task's name.
        corpus: a JSONL (BEIR's ``_id``, ``title``, ``text``; Pyserini's ``id``, ``contents``)
            or TSV corpus, read by :func:`~embedding_ttc.tasks.corpus_records.read_corpus_file`
            with the field options given.
        queries: JSONL (``_id`` or ``id``, ``text``) or TSV (id, text).
        qrels: TSV (query id, document id, grade; a header line and TREC's four columns are
            read too).
        id_field: the corpus's JSON id field.
        text_field: the corpus's JSON text field.
        title_field: the corpus's JSON title field.
        skip_invalid: skip (and count, as a warning) corpus records without text.

    Raises:
        DatasetError: a missing or malformed file (its line named), or no judged query.

    """
    from embedding_ttc.tasks.corpus_records import read_corpus_file

    read = read_corpus_file(
        corpus,
        id_field=id_field,
        text_field=text_field,
        title_field=title_field,
        skip_invalid=skip_invalid,
    )
    queries_path, qrels_path = Path(queries), Path(qrels)
    for path in (queries_path, qrels_path):
        if not path.is_file():
            raise DatasetError(f"{path} does not exist")
    q_ids, q_texts = _query_records(queries_path)
    doc_ids = [d.id for d in read.documents]
    query_text = dict(zip(q_ids, q_texts, strict=True))
    rows = ((f"{qrels_path}:{n}", q, d, g) for n, q, d, g in _qrels(qrels_path))
    judged = join_judgements(rows, query_text, set(doc_ids))
    warnings = list(judged.warnings)
    if read.skipped:
        warnings.append(f"{read.skipped} corpus records without text skipped (--skip-invalid)")
    kept = evaluable_queries(q_ids, query_text, judged, where=f"{qrels_path}")
    return RetrievalTask(
        name=name,
        doc_ids=doc_ids,
        doc_titles=[d.title for d in read.documents],
        doc_bodies=[d.text for d in read.documents],
        query_ids=kept,
        query_texts=[query_text[q] for q in kept],
        qrels={q: judged.qrels[q] for q in kept},
        source="files",
        metadata={"corpus": str(corpus), "queries": str(queries_path), "qrels": str(qrels_path)},
        warnings=warnings,
    )
