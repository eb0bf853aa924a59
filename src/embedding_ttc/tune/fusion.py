"""The fusions a search engineer tunes on judged queries, tuned the way they tune them.

Two runs over the same candidates (each query's dense top ``shortlist``): the cosine and BM25.
Every ranx fusion method of two runs under every normaliser that changes its input (the
score-based methods under each of ranx's six normalisers, the rank-based ones once) is fitted
by ``ranx.optimize_fusion`` on the fit queries' judgements, nDCG@10 its objective; the library's
own grids (``convex-grid``, ``wrrf-grid``) are evaluated beside them. Each configuration
becomes a program name (:func:`~embedding_ttc.programs.library.ranx_fusion.program_name`),
and is scored on the fit queries by this project's nDCG@10 through that name, so that the
number a configuration is chosen by is the number the deployed program gives. The best is
*the tuned fusion*.

Only the fit queries' judgements are read: the caller hands the task restricted to the queries
it may choose on (:func:`~embedding_ttc.tasks.task.restrict_queries`) and, for a fit inside it,
the ids of the fit part.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from embedding_ttc.encoders.base import Encoder
from embedding_ttc.evaluation.evaluate import ProgramRun, run_programs
from embedding_ttc.evaluation.metrics import ndcg_at_10
from embedding_ttc.evaluation.ranking import TaskRanker
from embedding_ttc.programs.catalog import GROUPS, get_program
from embedding_ttc.programs.library.ranx_fusion import (
    DEFAULT_NORM,
    NORMALISERS,
    RANK_METHODS,
    SCORE_METHODS,
    TUNED_METHODS,
    RanxFusionError,
    fuse_rows,
    import_ranx,
    program_name,
)
from embedding_ttc.tasks.task import RetrievalTask

LIBRARY_GRIDS: tuple[str, ...] = ("convex-grid", "wrrf-grid")
"""The library's fusion grids, evaluated beside ranx's methods."""

TRAINED_METHODS: frozenset[str] = frozenset(
    {"probfuse", "segfuse", "slidefuse", "posfuse", "bayesfuse", "mapfuse"}
)
"""Methods ``optimize_fusion`` trains on the judgements (no metric to optimise)."""

PROGRESS_BARS: frozenset[str] = frozenset({"probfuse", "slidefuse"})
"""Trained methods whose training draws a progress bar unless told not to."""


class FusionTrial(BaseModel):
    """One fusion configuration, fitted and scored on the fit queries.

    Attributes:
        family: ``ranx`` (fitted by ``optimize_fusion``) or ``library`` (a grid point).
        method: the fusion method (ranx's name, or the library program's).
        norm: the normaliser.
        program: the program name that deploys it (``None`` when it failed).
        fit_ndcg: mean nDCG@10 over the fit queries (``None`` when it failed).
        held_ndcg: mean nDCG@10 over the held-out queries, when the fit had some.
        seconds: the time fitting and scoring it took.
        error: why it failed, if it did.

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    family: Literal["ranx", "library"]
    method: str
    norm: str
    program: str | None
    fit_ndcg: float | None
    seconds: float
    held_ndcg: float | None = None
    error: str | None = None


class FusionTuning(BaseModel):
    """Every fusion tried on one set of fit queries, and the best of them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fit_queries: int
    trials: list[FusionTrial]

    @property
    def best_held(self) -> FusionTrial:
        """The trial with the highest held-out nDCG@10 (the first of equals, in trial order).

        Raises:
            ValueError: no trial has a held-out score.

        """
        ok = [t for t in self.trials if t.held_ndcg is not None]
        if not ok:
            raise ValueError("no fusion has a held-out score")
        return max(ok, key=lambda t: t.held_ndcg or 0.0)

    def configuration(self, other: FusionTrial) -> FusionTrial:
        """The trial of ``other``'s configuration here (a grid point: the same point).

        Raises:
            KeyError: it was not tried.

        """
        if other.family == "library":
            for t in self.trials:
                if t.program == other.program:
                    return t
            raise KeyError(f"{other.program} was not tried")
        return self.trial(other.family, other.method, other.norm)

    def trial(self, family: str, method: str, norm: str) -> FusionTrial:
        """The trial of one configuration (a grid's last point of that method and norm).

        Raises:
            KeyError: it was not tried.

        """
        found = [t for t in self.trials if (t.family, t.method, t.norm) == (family, method, norm)]
        if not found:
            raise KeyError(f"{family} {method}/{norm} was not tried")
        return found[-1]

    @property
    def best(self) -> FusionTrial:
        """The trial with the highest fit nDCG@10 (the first of equals, in trial order).

        Raises:
            ValueError: every trial failed.

        """
        ok = [t for t in self.trials if t.fit_ndcg is not None]
        if not ok:
            raise ValueError("no fusion could be fitted")
        return max(ok, key=lambda t: t.fit_ndcg or 0.0)


def configurations() -> list[tuple[str, str]]:
    """``(method, norm)`` of every ranx configuration tried, in order."""
    out = [(m, n) for n in NORMALISERS for m in SCORE_METHODS]
    return out + [(m, DEFAULT_NORM) for m in RANK_METHODS]


def library_fusions() -> list[str]:
    """The library's fusion grid points, in order."""
    return [name for group in LIBRARY_GRIDS for name in GROUPS[group]]


Progress = Callable[[str], None]


def dense_and_lexical(
    task: RetrievalTask, encoder: Encoder, shortlist: int
) -> tuple[ProgramRun, ProgramRun]:
    """The cosine's and BM25's runs over each query's dense top ``shortlist``."""
    dense, lexical = run_programs(
        [get_program("P0"), get_program("BM25")], task, encoder, shortlist=shortlist
    )
    return dense, lexical


class FusionBench:
    """The dense and BM25 runs of one task, from which fusions are fitted and scored.

    The runs are computed once (:func:`dense_and_lexical`); :meth:`tune` fits every fusion
    on some of the task's queries and scores it on others, as often as asked (cross-validation
    folds, an inner cut, all queries), reading only the judgements of the queries it fits on.
    """

    def __init__(self, task: RetrievalTask, encoder: Encoder, shortlist: int) -> None:
        self.ranx = import_ranx()
        self.task = task
        dense, lexical = dense_and_lexical(task, encoder, shortlist)
        self.ranker = dense.ranker
        self.cands = [dense.rows[i][0] for i in range(task.n_queries)]
        self.dense = [np.asarray(dense.rows[i][1], dtype=np.float64) for i in range(task.n_queries)]
        self.lexical = [
            np.asarray(lexical.rows[i][1], dtype=np.float64) for i in range(task.n_queries)
        ]
        grid = library_fusions()
        runs = run_programs([get_program(n) for n in grid], task, encoder, shortlist=shortlist)
        self.library = {n: dict(r.result.per_query) for n, r in zip(grid, runs, strict=True)}

    def rows(self, ids: Sequence[str] | None) -> list[int]:
        """The row of each of ``ids`` (all rows for ``None``), in the task's order."""
        if ids is None:
            return list(range(self.task.n_queries))
        keep = set(ids)
        return [i for i, q in enumerate(self.task.query_ids) if q in keep]

    def _run(self, values: list[np.ndarray]) -> Any:
        return self.ranx.Run(
            {f"q{k}": {f"d{j}": float(v) for j, v in enumerate(r)} for k, r in enumerate(values)}
        )

    def _fit_inputs(self, fit: list[int]) -> tuple[Any, list[Any]]:
        """Ranx's judgements and the two runs of the ``fit`` rows (only theirs are read)."""
        qrels = self.ranx.Qrels(
            {
                f"q{k}": {
                    f"d{j}": int(self.task.qrels[self.task.query_ids[i]].get(d, 0))
                    for j, d in enumerate(_doc_ids(self.ranker, self.cands[i]))
                }
                for k, i in enumerate(fit)
            }
        )
        runs = [self._run([self.dense[i] for i in fit]), self._run([self.lexical[i] for i in fit])]
        return qrels, runs

    def per_query(self, name: str) -> dict[str, float]:
        """A fusion program's nDCG@10 per query of the task, by its name."""
        if name in self.library:
            return self.library[name]
        program = get_program(name)
        rows = self.rows(None)
        fused = fuse_rows(
            self.dense,
            self.lexical,
            method=program.method,  # type: ignore[attr-defined]
            norm=program.norm,  # type: ignore[attr-defined]
            params=program.params,  # type: ignore[attr-defined]
        )
        return {
            self.task.query_ids[i]: _mean_ndcg(self.ranker, [i], [self.cands[i]], [fused[i]])
            for i in rows
        }

    def _fused_ndcg(self, rows: list[int], method: str, norm: str, params: Any) -> float | None:
        if not rows:
            return None
        fused = fuse_rows(
            [self.dense[i] for i in rows],
            [self.lexical[i] for i in rows],
            method=method,
            norm=norm,
            params=params,
        )
        return _mean_ndcg(self.ranker, rows, [self.cands[i] for i in rows], fused)

    def tune(
        self,
        fit_ids: Sequence[str] | None = None,
        held_ids: Sequence[str] = (),
        progress: Progress | None = None,
    ) -> FusionTuning:
        """Fit every fusion on ``fit_ids`` (all queries for ``None``); score it on ``held_ids``.

        Raises:
            ValueError: a query is both fitted on and held out.

        """
        fit, held = self.rows(fit_ids), self.rows(held_ids) if held_ids else []
        if set(fit) & set(held):
            raise ValueError("a query is both fitted on and held out")
        qrels, runs = self._fit_inputs(fit)
        trials: list[FusionTrial] = []
        for method, norm in configurations():
            t0 = time.perf_counter()
            try:
                name = program_name(method, norm, _fit(self.ranx, qrels, runs, method, norm))
                deployed = get_program(name).params  # type: ignore[attr-defined]
                trials.append(
                    FusionTrial(
                        family="ranx",
                        method=method,
                        norm=norm,
                        program=name,
                        fit_ndcg=self._fused_ndcg(fit, method, norm, deployed),
                        held_ndcg=self._fused_ndcg(held, method, norm, deployed),
                        seconds=time.perf_counter() - t0,
                    )
                )
            except (RanxFusionError, ValueError, TypeError, ZeroDivisionError) as exc:
                trials.append(
                    FusionTrial(
                        family="ranx",
                        method=method,
                        norm=norm,
                        program=None,
                        fit_ndcg=None,
                        seconds=time.perf_counter() - t0,
                        error=f"{type(exc).__name__}: {exc}",
                    )
                )
            if progress is not None:
                progress(f"{method}/{norm}")
        for name, per_query in self.library.items():
            base, _, params = name.partition(":")
            norm = "rank" if base == "WeightedRRF" else params.split("norm=")[-1]
            trials.append(
                FusionTrial(
                    family="library",
                    method=base,
                    norm=norm,
                    program=name,
                    fit_ndcg=_mean_of(per_query, self.task.query_ids, fit),
                    held_ndcg=_mean_of(per_query, self.task.query_ids, held) if held else None,
                    seconds=0.0,
                )
            )
            if progress is not None:
                progress(name)
        return FusionTuning(fit_queries=len(fit), trials=trials)

    def cross_validate(
        self, folds: int, seed: int, progress: Progress | None = None
    ) -> FusionTuning:
        """Every fusion's mean held-out nDCG@10 over ``folds`` seeded folds of the queries.

        Each trial's ``fit_ndcg`` and ``held_ndcg`` are means over the folds; its ``program``
        is the last fold's fit (the configuration, not its parameters, is what is chosen).

        Raises:
            ValueError: fewer queries than folds, or fewer than two folds.

        """
        n = self.task.n_queries
        if folds < 2 or n < folds:
            raise ValueError(f"cross-validation needs 2 to {n} folds, got {folds}")
        order = np.random.default_rng([seed, n]).permutation(n)
        parts = [sorted(order[k::folds].tolist()) for k in range(folds)]
        runs = []
        for part in parts:
            held = [self.task.query_ids[i] for i in part]
            fit = [q for q in self.task.query_ids if q not in set(held)]
            runs.append(self.tune(fit, held, progress))
        trials = []
        for group in zip(*(r.trials for r in runs), strict=True):
            ok = all(t.fit_ndcg is not None for t in group)
            last = group[-1]
            trials.append(
                last.model_copy(
                    update={
                        "fit_ndcg": float(np.mean([t.fit_ndcg for t in group])) if ok else None,
                        "held_ndcg": float(np.mean([t.held_ndcg for t in group])) if ok else None,
                        "program": last.program if ok else None,
                        "seconds": float(sum(t.seconds for t in group)),
                        "error": None if ok else next(t.error for t in group if t.error),
                    }
                )
            )
        return FusionTuning(fit_queries=n, trials=trials)

    def fit_one(self, trial: FusionTrial, fit_ids: Sequence[str] | None) -> str:
        """One configuration refitted on ``fit_ids``: its program name.

        Raises:
            ValueError: the configuration cannot be fitted there.

        """
        if trial.family == "library":
            assert trial.program is not None  # a grid point always has its name
            return trial.program
        fit = self.rows(fit_ids)
        qrels, runs = self._fit_inputs(fit)
        params = _fit(self.ranx, qrels, runs, trial.method, trial.norm)
        return program_name(trial.method, trial.norm, params)


def _mean_of(per_query: dict[str, float], ids: Sequence[str], rows: list[int]) -> float:
    return float(np.mean([per_query[ids[i]] for i in rows])) if rows else 0.0


def _doc_ids(ranker: TaskRanker, cand: np.ndarray | None) -> list[str]:
    idx = np.arange(len(ranker.doc_ids)) if cand is None else cand
    return [ranker.doc_ids[j] for j in idx]


def _fit(ranx: Any, qrels: Any, runs: list[Any], method: str, norm: str) -> dict[str, Any]:
    """Ranx's fitted parameters of ``method`` under ``norm`` (none for an untuned method)."""
    if method not in TUNED_METHODS:
        return {}
    if method in TRAINED_METHODS:
        quiet = {"show_progress": False} if method in PROGRESS_BARS else {}
        return dict(ranx.optimize_fusion(qrels=qrels, runs=runs, norm=norm, method=method, **quiet))
    return dict(
        ranx.optimize_fusion(
            qrels=qrels,
            runs=runs,
            norm=norm,
            method=method,
            metric="ndcg@10",
            show_progress=False,
        )
    )


def _mean_ndcg(
    ranker: TaskRanker,
    rows: list[int],
    cands: list[np.ndarray | None],
    fused: list[np.ndarray],
) -> float:
    """Mean nDCG@10 over ``rows`` of the fused scores, by the project's nDCG@10."""
    values = []
    for i, c, scores in zip(rows, cands, fused, strict=True):
        if ranker.idcg[i] <= 0.0:
            values.append(0.0)  # no positive judgement: 0 whatever the ranking (ndcg_rows)
            continue
        judged = ranker.task.qrels[ranker.task.query_ids[i]]
        ranked = ranker.top_of(c, scores, 10)
        values.append(ndcg_at_10([judged.get(d, 0) for d in ranked.doc_ids], ranker.idcg[i]))
    return float(np.mean(values))
