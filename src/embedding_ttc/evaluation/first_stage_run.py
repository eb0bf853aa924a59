"""A user's own first stage: the candidates of a TREC run file, reranked by every program.

``evaluate --first-stage-run RUN`` replaces the built-in first stage of ``--shortlist`` (dense
cosine or BM25) with the documents a run file lists for each query (:func:`load_first_stage_run`).
Every program, P0 included, reranks only those candidates, in the query batches of shortlist
mode (:mod:`~embedding_ttc.evaluation.batches`), so a program's Δ against P0 compares rerankers
of the same candidates.

The rules, in the order they apply:

* **Ids.** A run's query and document ids are matched against the task's ids as written first,
  then percent-decoded (this package's own run files percent-encode whitespace and ``%``; see
  :mod:`~embedding_ttc.evaluation.trec` for the conventions of other writers, whose
  double-quoted fields the reader has already unquoted). Trying the field as written first keeps
  an id that holds a ``%`` of its own; a field whose two readings name two different ids takes
  the one as written. Two lines of a query that name the same document (``doc 1`` quoted on one
  line, ``doc%201`` on another) are an error, as a duplicate line is.
* **Unknown ids.** A line whose query is not a query of the task, or whose document is not in
  the corpus, is dropped, and the task's warnings say how many (with the first of each); a run
  that covers none of the task's queries is an error. On a reranking task a document outside
  the query's pool is dropped too (counted), and so is the query itself where self-hits are
  excluded.
* **Order and depth.** A query's candidates are its run documents ordered by score, highest
  first, ties by rank (smallest first), then by line; ``depth`` keeps the best ``depth``.
* **Uncovered queries.** A task query the run does not cover (no line, or none of its documents
  in the corpus) is **excluded from every program's mean**, as trec_eval and pytrec_eval
  average over the queries a run covers by default (``trec_eval -c`` would count them as 0).
  The task the programs see is restricted to the covered queries, and a warning says how many
  were excluded; the result's ``first_stage_run`` record keeps the counts and the file's SHA-256.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.evaluation.records import FirstStageRunRecord
from embedding_ttc.evaluation.trec import RunFile, RunFileError, RunLine, read_run, unescape_id
from embedding_ttc.tasks.task import RetrievalTask


@dataclass(frozen=True)
class FirstStageRun:
    """The candidates of a run file on one task.

    Attributes:
        task: the task restricted to the queries the run covers (with a warning per drop).
        candidates: per query of ``task``, its candidates as global document indices, best
            first under the run.
        record: what the result records of the run (path, SHA-256, depth, counts).

    """

    task: RetrievalTask
    candidates: list[NDArray[np.intp]]
    record: FirstStageRunRecord


def _lookup(ids: dict[str, int], field: str) -> int | None:
    """The index of the id ``field`` names: as written, else percent-decoded."""
    found = ids.get(field)
    if found is None and "%" in field:
        found = ids.get(unescape_id(field))
    return found


@dataclass
class _Drops:
    """Lines dropped for one reason: how many, how many distinct ids, and the first."""

    count: int = 0
    first: RunLine | None = None
    ids: set[str] = field(default_factory=set)

    def add(self, line: RunLine, identifier: str) -> None:
        self.count += 1
        self.first = self.first or line
        self.ids.add(identifier)


def _outside(task: RetrievalTask, pools: dict[int, set[int]] | None, row: int, col: int) -> bool:
    """Whether document ``col`` is not among query ``row``'s candidates (pool, self-hit)."""
    if pools is not None and col not in pools[row]:
        return True
    return task.exclude_self_hits and task.doc_ids[col] == task.query_ids[row]


def _grouped(
    run: RunFile, task: RetrievalTask
) -> tuple[dict[int, list[tuple[int, RunLine]]], dict[str, _Drops]]:
    """Each task query's (document index, line) pairs, and the dropped lines by reason."""
    query_index = {q: i for i, q in enumerate(task.query_ids)}
    doc_index = {d: i for i, d in enumerate(task.doc_ids)}
    pools = None
    if task.pools is not None:
        pools = {query_index[q]: {doc_index[d] for d in task.pools[q]} for q in task.query_ids}
    drops = {"query": _Drops(), "document": _Drops(), "outside": _Drops()}
    per_query: dict[int, list[tuple[int, RunLine]]] = defaultdict(list)
    first_line: dict[tuple[int, int], int] = {}
    for line in run.lines:
        row = _lookup(query_index, line.qid)
        if row is None:
            drops["query"].add(line, line.qid)
            continue
        col = _lookup(doc_index, line.docid)
        if col is None:
            drops["document"].add(line, line.docid)
            continue
        seen = first_line.setdefault((row, col), line.line)
        if seen != line.line:
            raise RunFileError(
                f"{run.path}:{line.line}: document {task.doc_ids[col]!r} is given twice for "
                f"query {task.query_ids[row]!r} (first at line {seen}, spelt differently)"
            )
        if _outside(task, pools, row, col):
            drops["outside"].add(line, line.docid)
            continue
        per_query[row].append((col, line))
    return per_query, drops


def _warnings(run: RunFile, drops: dict[str, _Drops]) -> list[str]:
    out = []
    name, n = run.path.name, len(run.lines)
    q, d, o = drops["query"], drops["document"], drops["outside"]
    if q.first is not None:
        out.append(
            f"first-stage run {name}: query ids not in the task: {len(q.ids)} (first "
            f"{q.first.qid!r}, line {q.first.line}); their {q.count} of {n} lines dropped"
        )
    if d.first is not None:
        out.append(
            f"first-stage run {name}: document ids not in the corpus: {len(d.ids)} (first "
            f"{d.first.docid!r}, line {d.first.line}); their {d.count} of {n} lines dropped"
        )
    if o.first is not None:
        out.append(
            f"first-stage run {name}: lines naming a document outside the query's candidates "
            f"(its pool, or the query itself): {o.count} (first at line {o.first.line}); dropped"
        )
    return out


def first_stage_candidates(
    run: RunFile, task: RetrievalTask, depth: int | None = None
) -> FirstStageRun:
    """The candidates ``run`` gives each query of ``task`` (see the module docstring).

    Raises:
        RunFileError: the run covers none of the task's queries, or names a document twice
            for a query under two spellings.
        ValueError: ``depth`` is below 1.

    """
    if depth is not None and depth < 1:
        raise ValueError(f"the depth of a first-stage run must be positive, got {depth}")
    per_query, drops = _grouped(run, task)
    covered = sorted(per_query)
    n_run_queries = len({line.qid for line in run.lines})
    if not covered:
        q, d, o = drops["query"].count, drops["document"].count, drops["outside"].count
        raise RunFileError(
            f"{run.path}: the run covers none of the {task.n_queries} queries of task "
            f"{task.name}: of its {len(run.lines)} lines, {q} name a query not in the task "
            f"(its first query id is {run.lines[0].qid!r}, the task's {task.query_ids[0]!r}), "
            f"{d} a document not in the corpus, {o} a document outside the query's candidates; "
            "is it a run of another task?"
        )
    candidates = []
    for row in covered:
        ranked = sorted(per_query[row], key=lambda e: (-e[1].score, e[1].rank, e[1].line))
        cols = [col for col, _ in ranked[:depth]]
        candidates.append(np.array(cols, dtype=np.intp))
    warnings = _warnings(run, drops)
    uncovered = task.n_queries - len(covered)
    if uncovered:
        warnings.append(
            f"first-stage run {run.path.name} covers {len(covered)} of the {task.n_queries} "
            f"queries; the queries it does not cover ({uncovered}) are excluded from every "
            "program's mean (trec_eval's default; trec_eval -c would count them as 0)"
        )
    record = FirstStageRunRecord(
        path=str(run.path),
        sha256=run.sha256,
        depth=depth,
        lines=len(run.lines),
        run_queries=n_run_queries,
        covered_queries=len(covered),
        uncovered_queries=uncovered,
        unknown_queries=len(drops["query"].ids),
        unknown_documents=drops["document"].count,
        outside_candidates=drops["outside"].count,
    )
    return FirstStageRun(_restricted(task, covered, warnings), candidates, record)


def _restricted(task: RetrievalTask, rows: list[int], warnings: list[str]) -> RetrievalTask:
    """``task`` with only the query ``rows`` (in task order) and the warnings added."""
    ids = [task.query_ids[i] for i in rows]
    return replace(
        task,
        query_ids=ids,
        query_texts=[task.query_texts[i] for i in rows],
        qrels={q: task.qrels[q] for q in ids},
        pools=None if task.pools is None else {q: task.pools[q] for q in ids},
        warnings=[*task.warnings, *warnings],
    )


def load_first_stage_run(
    path: Path | str, task: RetrievalTask, depth: int | None = None
) -> FirstStageRun:
    """Read the run file at ``path`` and take its candidates for ``task``."""
    return first_stage_candidates(read_run(path), task, depth)
