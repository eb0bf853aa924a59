"""``evaluate(program, task, encoder) -> TaskResult``: the one path every program goes through.

1. Encode the corpus once under ``retrieval.passage`` (base stage, index side) and the queries
   once under ``retrieval.query`` (base stage, query side): ``T_base = |Q| + |D|``.
2. ``S = Q Dᵀ``; call the program with a :class:`~embedding_ttc.programs.base.Context` whose
   ``encode_fn`` is metered (program stage).
3. Check the output (shape, finite), rank each query's candidates and score nDCG@10, and the
   extra measures asked for (:mod:`~embedding_ttc.evaluation.measures`) with pytrec_eval.

Each query's candidates are the whole corpus (or its pool), the best ``shortlist`` of a
built-in first stage, or the documents of a user's run file
(:mod:`~embedding_ttc.evaluation.first_stage_run`). Several programs on one task share step 1
(:func:`evaluate_programs`).
"""

from __future__ import annotations

import importlib.metadata
import platform
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.encoders.base import PASSAGE, QUERY, Embeddings, Encoder
from embedding_ttc.encoders.encode import Progress, encode_texts
from embedding_ttc.encoders.meter import CostCounts, Meter, MeteredEncoder
from embedding_ttc.evaluation.batches import (
    Batch,
    FirstStage,
    full_batch,
    shortlist_batches,
    shortlists,
)
from embedding_ttc.evaluation.first_stage_run import FirstStageRun
from embedding_ttc.evaluation.measures import Measures, MeasureScorer
from embedding_ttc.evaluation.ranking import TaskRanker
from embedding_ttc.evaluation.records import (
    CostRecord,
    EncoderRecord,
    TaskRecord,
    TaskResult,
    Timings,
)
from embedding_ttc.evaluation.run_scope import program_run
from embedding_ttc.programs.base import Context, Matrix, Program, program_version
from embedding_ttc.programs.output import check_output
from embedding_ttc.programs.primitives.tokenizers import tokenizer_name
from embedding_ttc.tasks.task import RetrievalTask


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in ("embedding-ttc", "numpy", "torch", "sentence-transformers", "transformers"):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


def _forward_seconds(encoder: Encoder) -> float | None:
    stats = getattr(encoder, "stats", None)
    value = getattr(stats, "forward_seconds", None)
    return float(value) if value is not None else None


def encoder_record(encoder: Encoder) -> EncoderRecord:
    """The record of an encoder's identity and views."""
    info = encoder.info
    return EncoderRecord(
        name=info.name,
        family=info.family,
        model_id=info.model_id,
        revision=info.revision,
        dim=info.dim,
        views={v: s.describe() for v, s in info.views.items()},
        collapsed=info.collapsed,
    )


def task_record(task: RetrievalTask) -> TaskRecord:
    """The record of a task's identity and size."""
    return TaskRecord(
        name=task.name,
        n_docs=task.n_docs,
        n_queries=task.n_queries,
        pool=task.is_pool,
        source=task.source,
        warnings=list(task.warnings),
    )


def _cost(counts: CostCounts) -> CostRecord:
    base_q = counts.total("base", "query")
    prog_q = counts.total("program", "query")
    return CostRecord(
        texts=dict(sorted(counts.texts.items())),
        base_calls=counts.total("base"),
        program_calls=counts.total("program"),
        index_calls=counts.total(side="index"),
        query_calls=counts.total(side="query"),
        cost_ratio=counts.cost_ratio,
        query_time_cost_ratio=(base_q + prog_q) / base_q if base_q else float("nan"),
    )


ScoredRow = tuple[NDArray[np.intp] | None, NDArray[np.float32]]


@dataclass(frozen=True)
class ProgramRun:
    """A result together with the scores it came from (for run files).

    ``rows[i]`` is query ``i``'s ``(candidates, scores)``: global document indices and their
    scores, or ``(None, row)`` for a whole row over the corpus.
    """

    result: TaskResult
    rows: list[ScoredRow]
    ranker: TaskRanker

    def rankings(self, depth: int) -> Iterator[tuple[str, list[str], list[float]]]:
        """``(query id, doc ids, scores)`` of the best ``depth`` candidates of each query."""
        for qid, (cand, values) in zip(self.ranker.task.query_ids, self.rows, strict=True):
            ranked = self.ranker.top_of(cand, values, depth)
            yield qid, ranked.doc_ids, ranked.scores


def _first_stage(
    kind: FirstStage, task: RetrievalTask, Q: Matrix, D: Matrix
) -> Callable[[NDArray[np.intp]], Matrix]:
    if kind == "dense":
        return lambda rows: Q[rows] @ D.T
    if kind == "bm25":
        from embedding_ttc.programs.primitives.lexical import BM25

        bm25 = BM25.fit(task.doc_texts)
        texts = list(task.query_texts)
        return lambda rows: bm25.scores([texts[i] for i in rows])
    raise ValueError(f"unknown first stage {kind!r}; choose 'dense' or 'bm25'")


@dataclass(frozen=True)
class _Prepared:
    batch: Batch
    ctx: Context
    Q: Matrix
    D: Matrix
    S: Matrix


def _contexts(
    task: RetrievalTask,
    batches: Sequence[Batch],
    Q: Matrix,
    D: Matrix,
    S_full: Matrix | None,
    encode_fn: Callable[..., Embeddings],
    index_time: Callable[[], AbstractContextManager[None]],
    collapsed: bool,
) -> Iterator[_Prepared]:
    query_texts, doc_texts = list(task.query_texts), task.doc_texts
    for batch in batches:
        if batch.whole and S_full is not None:
            Qb, Db, Sb = Q, D, S_full
        else:
            Qb, Db = Q[batch.rows], D[batch.cols]
            Sb = Qb @ Db.T
        ctx = Context(
            encode_fn=encode_fn,
            query_texts=tuple(query_texts[i] for i in batch.rows),
            doc_texts=tuple(doc_texts[j] for j in batch.cols),
            query_ids=tuple(task.query_ids[i] for i in batch.rows),
            doc_ids=tuple(task.doc_ids[j] for j in batch.cols),
            candidates=batch.candidates,
            views_collapsed=collapsed,
            index_time=index_time,
        )
        yield _Prepared(batch, ctx, Qb, Db, Sb)


def run_programs(
    programs: Sequence[Program],
    task: RetrievalTask,
    encoder: Encoder,
    *,
    progress: Progress | None = None,
    shortlist: int | None = None,
    first_stage: FirstStage = "dense",
    first_stage_run: FirstStageRun | None = None,
    measures: Measures | None = None,
) -> Iterator[ProgramRun]:
    """Run each program on ``task``, sharing the base encoding; yield one run at a time.

    Args:
        programs: the programs, evaluated in order.
        task: the task.
        encoder: the frozen encoder (usually cached; it is metered here).
        progress: called with the number of texts encoded by the base stage.
        shortlist: if given, rerank only each query's best ``shortlist`` first-stage
            candidates, in query batches (see :mod:`embedding_ttc.evaluation.batches`).
        first_stage: ``"dense"`` (cosine of the base embeddings) or ``"bm25"``.
        first_stage_run: rerank only the candidates of a run file, in the same query
            batches; ``task`` must be the run's own (restricted to the queries it covers).
            Excludes ``shortlist``.
        measures: extra measures to compute with pytrec_eval beside nDCG@10.

    Raises:
        ValueError: ``first_stage_run`` is given with ``shortlist``, or for another task.

    """
    if first_stage_run is not None:
        if shortlist is not None:
            raise ValueError("a first-stage run and a shortlist exclude each other")
        if list(first_stage_run.task.query_ids) != list(task.query_ids):
            raise ValueError("the first-stage run was taken for another task; pass its .task")
    start = time.perf_counter()
    meter = Meter()
    metered = MeteredEncoder(encoder, meter)
    fwd0 = _forward_seconds(encoder)
    with meter.scope(stage="base", side="index"):
        D = encode_texts(metered, task.doc_texts, PASSAGE, progress)
    with meter.scope(stage="base", side="query"):
        Q = encode_texts(metered, list(task.query_texts), QUERY, progress)
    ranker = TaskRanker(task)
    if first_stage_run is not None:
        S_full: Matrix | None = None
        batches = list(shortlist_batches(first_stage_run.candidates))
    elif shortlist is None:
        S_full = Q @ D.T
        batches = [full_batch(ranker)]
    else:
        S_full = None
        lists = shortlists(ranker, _first_stage(first_stage, task, Q, D), shortlist)
        batches = list(shortlist_batches(lists))
    base = meter.snapshot()
    base_fwd = (_forward_seconds(encoder) or 0.0) - (fwd0 or 0.0)
    base_seconds = time.perf_counter() - start

    def encode_fn(
        texts: Sequence[str],
        view: str = QUERY,
        dim: int | None = None,
        max_length: int | None = None,
    ) -> Embeddings:
        return metered.encode(list(texts), view=view, dim=dim, max_length=max_length)

    def index_time() -> AbstractContextManager[None]:
        return meter.scope(side="index")

    prepared = list(
        _contexts(task, batches, Q, D, S_full, encode_fn, index_time, encoder.info.collapsed)
    )
    scorer = MeasureScorer(measures, task) if measures is not None else None
    for program in programs:
        before, fwd_before = meter.snapshot(), _forward_seconds(encoder)
        program_seconds = 0.0
        rows: list[ScoredRow] = [(None, np.zeros(0, np.float32))] * task.n_queries
        with program_run():  # a limit per program per task counts every batch's call
            for prep in prepared:
                t0 = time.perf_counter()
                with meter.scope(stage="program", side="query"):
                    out = program(prep.Q, prep.D, prep.S, prep.ctx)
                program_seconds += time.perf_counter() - t0
                scores = check_output(out, prep.S.shape, program.name)
                _scatter(rows, prep.batch, scores)
        t1 = time.perf_counter()
        per_query = ranker.ndcg_rows(rows)
        extra = None
        if scorer is not None:
            extra = scorer.score([ranker.top_of(c, v, scorer.measures.depth) for c, v in rows])
        scoring_seconds = time.perf_counter() - t1
        spent = meter.snapshot().minus(before)
        counts = CostCounts(
            {k: base.texts.get(k, 0) + spent.texts.get(k, 0) for k in {*base.texts, *spent.texts}},
            base.seconds + spent.seconds,
        )
        fwd_prog = (_forward_seconds(encoder) or 0.0) - (fwd_before or 0.0)
        forward = base_fwd + fwd_prog if fwd0 is not None else counts.seconds
        result = TaskResult(
            encoder=encoder_record(encoder),
            task=task_record(task),
            program=program.name,
            program_version=program_version(program),
            tokenizer=tokenizer_name(),
            shortlist=first_stage_run.record.depth if first_stage_run else shortlist,
            first_stage=_first_stage_name(shortlist, first_stage, first_stage_run),
            first_stage_run=first_stage_run.record if first_stage_run else None,
            metrics=extra.aggregate if extra else {},
            per_query_metrics=extra.per_query if extra else {},
            metrics_depth=measures.depth if measures else None,
            ndcg_at_10=float(per_query.mean()) if per_query.size else 0.0,
            per_query={q: float(v) for q, v in zip(task.query_ids, per_query, strict=True)},
            cost=_cost(counts),
            timings=Timings(
                total_seconds=base_seconds + program_seconds + scoring_seconds,
                encode_seconds=counts.seconds,
                forward_seconds=forward,
                program_seconds=program_seconds,
                algebra_seconds=max(program_seconds - spent.seconds, 0.0),
                scoring_seconds=scoring_seconds,
            ),
            versions=_versions(),
        )
        yield ProgramRun(result, rows, ranker)


def _first_stage_name(
    shortlist: int | None, first_stage: FirstStage, run: FirstStageRun | None
) -> str | None:
    """What the result records as its first stage: ``run``, the built-in one, or none."""
    if run is not None:
        return "run"
    return first_stage if shortlist is not None else None


def _scatter(rows: list[ScoredRow], batch: Batch, scores: Matrix) -> None:
    """Store each query's candidates and scores (global indices) from a batch's output."""
    for i, row in enumerate(batch.rows):
        if batch.candidates is None:
            rows[row] = (None, scores[i])
        elif batch.whole:
            cand = batch.candidates[i]
            rows[row] = (cand, scores[i, cand])
        else:
            local = batch.candidates[i]
            rows[row] = (batch.cols[local], scores[i, local])


def evaluate_programs(
    programs: Sequence[Program],
    task: RetrievalTask,
    encoder: Encoder,
    *,
    progress: Progress | None = None,
    shortlist: int | None = None,
    first_stage: FirstStage = "dense",
    first_stage_run: FirstStageRun | None = None,
    measures: Measures | None = None,
) -> list[TaskResult]:
    """Evaluate each program on ``task``, sharing the base encoding; results in input order.

    The arguments are :func:`run_programs`'.
    """
    runs = run_programs(
        programs,
        task,
        encoder,
        progress=progress,
        shortlist=shortlist,
        first_stage=first_stage,
        first_stage_run=first_stage_run,
        measures=measures,
    )
    return [run.result for run in runs]


def evaluate(
    program: Program,
    task: RetrievalTask,
    encoder: Encoder,
    *,
    progress: Progress | None = None,
    shortlist: int | None = None,
    first_stage: FirstStage = "dense",
    first_stage_run: FirstStageRun | None = None,
    measures: Measures | None = None,
) -> TaskResult:
    """Evaluate one program on one task with one encoder (the arguments of :func:`run_programs`)."""
    return evaluate_programs(
        [program],
        task,
        encoder,
        progress=progress,
        shortlist=shortlist,
        first_stage=first_stage,
        first_stage_run=first_stage_run,
        measures=measures,
    )[0]
