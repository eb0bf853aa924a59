"""Judgements joined to a task's queries and documents, the same way for every loader.

Every loader (a BEIR folder, an ir_datasets collection) reads its rows its own way, then hands
them here, so what counts as an error and what as a counted warning is written once:

* a pair judged twice is an error, unless ``same_grade_repeats`` (collections assembled from
  several assessment rounds repeat rows): then a repeat with the same grade is counted once,
  with a warning, and a repeat with another grade is still an error;
* rows naming unknown documents or queries are dropped and counted;
* queries with empty text are dropped, queries without any judgement are not evaluated (as in
  pytrec_eval), both counted; a task left with no query is an error.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from embedding_ttc.errors import DatasetError


@dataclass
class Judged:
    """Judgements by query, each query's judged documents in row order, and the warnings."""

    qrels: dict[str, dict[str, int]] = field(default_factory=dict)
    pools: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def join_judgements(
    rows: Iterable[tuple[str, str, str, int]],
    query_text: dict[str, str],
    doc_set: set[str],
    *,
    same_grade_repeats: bool = False,
) -> Judged:
    """Join ``(where, query id, doc id, grade)`` rows; ``where`` names the row in errors."""
    out = Judged()
    unknown_docs = unknown_queries = repeated = 0
    for where, qid, did, grade in rows:
        if qid not in query_text:
            unknown_queries += 1
            continue
        if did not in doc_set:
            unknown_docs += 1
            continue
        judged = out.qrels.setdefault(qid, {})
        if did in judged:
            if not same_grade_repeats:
                raise DatasetError(f"{where}: ({qid}, {did}) is judged twice")
            if judged[did] != grade:
                raise DatasetError(
                    f"{where}: ({qid}, {did}) is judged twice with different grades "
                    f"({judged[did]} and {grade})"
                )
            repeated += 1
            continue
        judged[did] = grade
        out.pools.setdefault(qid, []).append(did)
    if unknown_docs:
        out.warnings.append(f"{unknown_docs} qrels rows dropped: unknown corpus ids")
    if unknown_queries:
        out.warnings.append(f"{unknown_queries} qrels rows dropped: unknown query ids")
    if repeated:
        out.warnings.append(f"{repeated} repeated qrels rows (same grade) counted once")
    return out


def evaluable_queries(
    query_ids: Iterable[str],
    query_text: dict[str, str],
    judged: Judged,
    *,
    where: str,
) -> list[str]:
    """The queries with text and judgements, in ``query_ids`` order (warnings added to ``judged``).

    Raises:
        DatasetError: no query is left (``where`` names the task's source).

    """
    ids = list(query_ids)
    kept = [q for q in ids if q in judged.qrels]
    empty = [q for q in kept if not query_text[q].strip()]
    if empty:
        judged.warnings.append(f"{len(empty)} queries dropped: empty text")
        kept = [q for q in kept if query_text[q].strip()]
    unjudged = len(ids) - len(judged.qrels)
    if unjudged:
        judged.warnings.append(f"{unjudged} queries without judgements not evaluated")
    if not kept:
        raise DatasetError(f"{where}: no query has both text and judgements")
    return kept
