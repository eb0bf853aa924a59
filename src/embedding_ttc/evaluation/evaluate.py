"""``evaluate(program, task, encoder) -> TaskResult``: the one path every program goes through.

1. Encode the corpus once under ``retrieval.passage`` (base stage, index side) and the queries
   once under ``retrieval.query`` (base stage, query side): ``T_base = |Q| + |D|``.
2. ``S = Q Dᵀ``; call the program with a :class:`~embedding_ttc.programs.base.Context` whose
   ``encode_fn`` is metered (program stage).
3. Check the output (shape, finite), rank each query's candidates and score nDCG@10.

Several programs on one task share step 1 (:func:`evaluate_programs`).
"""

from __future__ import annotations

import importlib.metadata
import platform
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass

import numpy as np

from embedding_ttc.encoders.base import PASSAGE, QUERY, Embeddings, Encoder
from embedding_ttc.encoders.meter import CostCounts, Meter, MeteredEncoder
from embedding_ttc.errors import EmbeddingTTCError
from embedding_ttc.evaluation.ranking import TaskRanker
from embedding_ttc.evaluation.records import (
    CostRecord,
    EncoderRecord,
    TaskRecord,
    TaskResult,
    Timings,
)
from embedding_ttc.programs.base import Context, Matrix, Program
from embedding_ttc.tasks.task import RetrievalTask

Progress = Callable[[int], None]
"""Called with the number of texts just encoded (for progress bars)."""

ENCODE_CHUNK = 256


class ProgramOutputError(EmbeddingTTCError):
    """A program returned something other than a finite |Q|×|D| float matrix."""


def encode_texts(
    encoder: Encoder, texts: Sequence[str], view: str, progress: Progress | None = None
) -> Embeddings:
    """Encode in chunks, longest texts first, so a progress bar moves and padding stays low."""
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    out: Embeddings | None = None
    for start in range(0, len(order), ENCODE_CHUNK):
        idx = order[start : start + ENCODE_CHUNK]
        emb = encoder.encode([texts[i] for i in idx], view=view)
        if out is None:
            out = np.empty((len(texts), emb.shape[1]), dtype=np.float32)
        out[idx] = emb
        if progress is not None:
            progress(len(idx))
    if out is None:
        return np.zeros((0, encoder.info.dim), dtype=np.float32)
    return out


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


def check_output(out: object, shape: tuple[int, int], name: str) -> Matrix:
    """Return ``out`` as a float32 matrix if it is a finite array of ``shape``, else raise."""
    if not isinstance(out, np.ndarray):
        raise ProgramOutputError(f"program {name} returned {type(out).__name__}, not an array")
    if out.shape != shape:
        raise ProgramOutputError(f"program {name} returned shape {out.shape}, expected {shape}")
    if not np.issubdtype(out.dtype, np.number):
        raise ProgramOutputError(f"program {name} returned dtype {out.dtype}")
    if not np.all(np.isfinite(out)):
        raise ProgramOutputError(f"program {name} returned non-finite scores")
    return out.astype(np.float32, copy=False)


@dataclass(frozen=True)
class ProgramRun:
    """A result together with the scores it came from (for run files)."""

    result: TaskResult
    scores: Matrix
    ranker: TaskRanker

    def rankings(self, depth: int) -> Iterator[tuple[str, list[str], list[float]]]:
        """``(query id, doc ids, scores)`` of the best ``depth`` candidates of each query."""
        for row, qid in enumerate(self.ranker.task.query_ids):
            ranked = self.ranker.top(self.scores[row], row, depth)
            yield qid, ranked.doc_ids, ranked.scores


def run_programs(
    programs: Sequence[Program],
    task: RetrievalTask,
    encoder: Encoder,
    *,
    progress: Progress | None = None,
) -> Iterator[ProgramRun]:
    """Run each program on ``task``, sharing the base encoding; yield one run at a time."""
    start = time.perf_counter()
    meter = Meter()
    metered = MeteredEncoder(encoder, meter)
    fwd0 = _forward_seconds(encoder)
    with meter.scope(stage="base", side="index"):
        D = encode_texts(metered, task.doc_texts, PASSAGE, progress)
    with meter.scope(stage="base", side="query"):
        Q = encode_texts(metered, list(task.query_texts), QUERY, progress)
    S = Q @ D.T
    base = meter.snapshot()
    base_fwd = (_forward_seconds(encoder) or 0.0) - (fwd0 or 0.0)
    base_seconds = time.perf_counter() - start
    ranker = TaskRanker(task)

    def encode_fn(
        texts: Sequence[str],
        view: str = QUERY,
        dim: int | None = None,
        max_length: int | None = None,
    ) -> Embeddings:
        return metered.encode(list(texts), view=view, dim=dim, max_length=max_length)

    def index_time() -> AbstractContextManager[None]:
        return meter.scope(side="index")

    ctx = Context(
        encode_fn=encode_fn,
        query_texts=tuple(task.query_texts),
        doc_texts=tuple(task.doc_texts),
        query_ids=tuple(task.query_ids),
        doc_ids=tuple(task.doc_ids),
        candidates=(
            tuple(ranker.candidate_indices(i) for i in range(task.n_queries))
            if task.is_pool
            else None
        ),
        views_collapsed=encoder.info.collapsed,
        index_time=index_time,
    )
    for program in programs:
        before, fwd_before = meter.snapshot(), _forward_seconds(encoder)
        t0 = time.perf_counter()
        with meter.scope(stage="program", side="query"):
            out = program(Q, D, S, ctx)
        program_seconds = time.perf_counter() - t0
        scores = check_output(out, S.shape, program.name)
        t1 = time.perf_counter()
        per_query = ranker.ndcg(scores)
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
        yield ProgramRun(result, scores, ranker)


def evaluate_programs(
    programs: Sequence[Program],
    task: RetrievalTask,
    encoder: Encoder,
    *,
    progress: Progress | None = None,
) -> list[TaskResult]:
    """Evaluate each program on ``task``, sharing the base encoding; results in input order."""
    return [run.result for run in run_programs(programs, task, encoder, progress=progress)]


def evaluate(
    program: Program, task: RetrievalTask, encoder: Encoder, *, progress: Progress | None = None
) -> TaskResult:
    """Evaluate one program on one task with one encoder."""
    return evaluate_programs([program], task, encoder, progress=progress)[0]
