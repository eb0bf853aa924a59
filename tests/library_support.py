"""Helpers for the library program tests: call a program directly, outside ``run_programs``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from embedding_ttc.encoders.base import PASSAGE, QUERY, Encoder
from embedding_ttc.encoders.meter import Meter, MeteredEncoder
from embedding_ttc.programs.base import Context
from embedding_ttc.tasks.task import RetrievalTask


def direct_call(
    task: RetrievalTask, encoder: Encoder, candidates: Sequence[np.ndarray] | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, Context, Meter]:
    """``Q, D, S, ctx`` as the evaluator builds them, with the meter of program encodes."""
    D = encoder.encode(task.doc_texts, view=PASSAGE)
    Q = encoder.encode(list(task.query_texts), view=QUERY)
    meter = Meter()
    metered = MeteredEncoder(encoder, meter)

    def encode_fn(texts, view=QUERY, dim=None, max_length=None):
        return metered.encode(list(texts), view=view, dim=dim, max_length=max_length)

    ctx = Context(
        encode_fn=encode_fn,
        query_texts=tuple(task.query_texts),
        doc_texts=tuple(task.doc_texts),
        query_ids=tuple(task.query_ids),
        doc_ids=tuple(task.doc_ids),
        candidates=candidates,
        views_collapsed=encoder.info.collapsed,
        index_time=lambda: meter.scope(side="index"),
    )
    return Q, D, Q @ D.T, ctx, meter
