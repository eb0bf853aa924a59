"""The compact prompt's worked examples: two valid programs of different structure.

A small model copies what it reads; the examples show the helpers called with the right
arguments. A pre-check refuses a copy of an example (:func:`example_structures`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from embedding_ttc.search.novelty import structure


@dataclass(frozen=True)
class Example:
    """A worked example program shown in the compact prompt."""

    name: str
    title: str
    source: str


EXAMPLES: tuple[Example, ...] = (
    Example(
        name="example:reversed_view_fusion",
        title="a reversed-view channel fused with S by row z-scores",
        source='''\
"""Novelty: fuses S with the documents re-encoded as queries (a reversed view).
Hypothesis: a second view of each document corrects the passage view's bias."""
from embedding_ttc.programs.primitives.channels import fuse, view_scores
from embedding_ttc.programs.primitives.scores import candidate_mask

W_S = 1.0
W_REV = 0.5


def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)  # None or (n_q, n_d) bool
    S_rev = view_scores(Q, ctx, "retrieval.query")  # (n_q, n_d); documents encoded once
    return fuse([S, S_rev], [W_S, W_REV], mask=mask)  # float32 (n_q, n_d)
''',
    ),
    Example(
        name="example:rocchio_refine",
        title="Rocchio refinement of each query with its top documents",
        source='''\
"""Novelty: moves each query toward the mean of its top-3 documents, then rescores.
Hypothesis: the best documents share the vocabulary the query lacks."""
import numpy as np
from embedding_ttc.programs.primitives.scores import candidate_mask, top_k_indices

K = 3
ALPHA = 0.7


def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    top = top_k_indices(S, K, mask)  # list: per query, an int array of <= K columns
    Q_new = Q.copy()
    for i in range(Q.shape[0]):
        if len(top[i]) > 0:
            q = ALPHA * Q[i] + (1.0 - ALPHA) * D[top[i]].mean(axis=0)
            Q_new[i] = q / np.linalg.norm(q)
    out = 0.5 * S + 0.5 * (Q_new @ D.T)  # (n_q, n_d)
    return out.astype(np.float32)
''',
    ),
)
"""Two valid programs of different structure: a ready-made channel fused by z-scores, and a
feedback loop written with numpy over the query vectors."""


@functools.cache
def example_structures() -> dict[str, tuple[str, ...]]:
    """The examples' structures, so a pre-check can refuse a copy of an example."""
    return {e.name: structure(e.source) for e in EXAMPLES}
