"""Programs scored side by side on one task: per-query nDCG@10 and seconds outside the encoder.

:func:`score_programs` runs every program in one evaluation with P0, sharing the base
encoding. The served time the pick rule reads is measured apart, on the deployed path
(:mod:`~embedding_ttc.tune.served`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict

from embedding_ttc.encoders.base import Encoder
from embedding_ttc.evaluation.evaluate import run_programs
from embedding_ttc.programs.base import Program
from embedding_ttc.tasks.task import RetrievalTask


class ProgramScore(BaseModel):
    """One program's numbers on one task.

    Attributes:
        name: its label.
        per_query: nDCG@10 per query id.
        algebra_seconds_per_query: its seconds outside the encoder, per query, in the batch
            evaluation.
        served_seconds: its median seconds serving one query (``None``: not measured).
        error: why it failed, if it did (then the numbers are empty).

    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    per_query: dict[str, float]
    algebra_seconds_per_query: float
    served_seconds: float | None = None
    error: str | None = None

    def values(self, query_ids: Sequence[str]) -> list[float]:
        """Its nDCG@10 on ``query_ids``, in that order."""
        return [self.per_query[q] for q in query_ids]


def score_programs(
    programs: Sequence[tuple[str, Program]],
    task: RetrievalTask,
    encoder: Encoder,
    *,
    shortlist: int,
    progress: Callable[[str], None] | None = None,
    deadline: float | None = None,
) -> list[ProgramScore]:
    """Score ``(label, program)`` pairs on ``task`` in one evaluation, in order.

    A program that raises is recorded with its error and the others go on. With a
    ``deadline`` (``time.monotonic()`` seconds), programs not reached by then are not run.
    """
    out: list[ProgramScore] = []
    n = max(task.n_queries, 1)
    runs = run_programs([p for _, p in programs], task, encoder, shortlist=shortlist)
    labels = iter(programs)
    while True:
        label, _ = next(labels, ("", None))
        if not label:
            break
        if deadline is not None and time.monotonic() > deadline:
            out.append(_failed(label, "not run: the run's time budget was spent"))
            continue
        try:
            result = next(runs).result
        except StopIteration:
            break
        except Exception as exc:  # a program's own failure is its record, not the run's end
            out.append(_failed(label, f"{type(exc).__name__}: {exc}"))
            runs = run_programs(
                [p for _, p in programs[len(out) :]], task, encoder, shortlist=shortlist
            )
            continue
        algebra = result.timings.algebra_seconds / n
        out.append(
            ProgramScore(
                name=label,
                per_query=dict(result.per_query),
                algebra_seconds_per_query=algebra,
            )
        )
        if progress is not None:
            progress(label)
    return out


def _failed(label: str, why: str) -> ProgramScore:
    return ProgramScore(
        name=label,
        per_query={},
        algebra_seconds_per_query=0.0,
        error=why,
    )
