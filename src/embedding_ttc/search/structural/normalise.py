"""The normalisations a channel takes before fusion, and the code each renders.

The z-scores and the per-query min-max (``minmax``: the normalisation Lee (1997) and Bruch et
al. (2023) pair with score fusion) come from ``primitives.scores``. Renderer version 1
(:data:`RENDERERS`) wrote the min-max into each program as a helper, :data:`MINMAX_HELPER_V1`;
programs committed under it keep that text, and their genomes re-render to it byte for byte
with ``renderer=1``. The current renderer calls the primitive
(:func:`~embedding_ttc.programs.primitives.scores.minmax_rows`, the same arithmetic).

The normalisation no primitive provides is written into the program as a helper, from numpy
and the primitives' own rules (the candidate mask, ``ZSCORE_EPS`` for "no spread",
``top_k_indices``'s ranking order):

* ``local``: a *candidate-local* z-score, whose mean and deviation are those of the query's
  top ``LOCAL_K`` candidates under the dense cosine ``S``. Fusion decides the order of that
  head; standardising by the spread there, not over every candidate, keeps the long tail
  (most of a corpus scores 0 under BM25) from setting the scale. Every candidate is
  standardised by the head's statistics, and a candidate outside the head is clipped to the
  head's range of z-scores, so the tail can neither dominate nor drown a sum.
"""

from __future__ import annotations

from importlib.resources import files

from embedding_ttc.search.structural.builder import ProgramBuilder

RENDERERS: tuple[int, ...] = (1, 2)
"""The renderer's versions: 1 wrote min-max as a helper in the program, 2 calls the primitive."""

RENDERER = 2
"""The version new programs are rendered with."""

MINMAX_HELPER_V1 = (files("embedding_ttc.search.structural") / "minmax_helper_v1.txt").read_text(
    encoding="utf-8"
)
"""The min-max helper renderer version 1 wrote into each program, frozen as data.

It is the text that committed program files with a min-max channel hold (``results/``); it is
kept only so that their genomes re-render byte for byte. The package's min-max is
:func:`~embedding_ttc.programs.primitives.scores.minmax_rows` (the same arithmetic, held to
the helper bit for bit by a parity test), which version 2 calls.
"""

LOCAL_HELPER = '''\
def _local_zscore(scores, dense, mask):
    """Z-scores by the mean and deviation of each query's top LOCAL_K candidates under dense.

    Candidates outside that head are clipped to the head's range of z-scores (the range holds
    0, the head's mean); a head without spread gives 0; non-candidates are 0.
    """
    cand = np.ones(np.shape(scores), dtype=bool) if mask is None else mask
    x = np.where(cand, scores, 0.0).astype(np.float64)
    head = np.zeros(x.shape, dtype=bool)
    for row, top in enumerate(top_k_indices(dense, LOCAL_K, mask)):
        head[row, top] = True
    size = np.maximum(head.sum(axis=1, keepdims=True), 1)
    mean = np.where(head, x, 0.0).sum(axis=1, keepdims=True) / size
    dev = np.where(head, x - mean, 0.0)
    std = np.sqrt((dev * dev).sum(axis=1, keepdims=True) / size)
    spread = std > ZSCORE_EPS
    z = np.where(spread, (x - mean) / np.where(spread, std, 1.0), 0.0)
    low = z.min(axis=1, keepdims=True, where=head, initial=0.0)
    high = z.max(axis=1, keepdims=True, where=head, initial=0.0)
    z = np.where(head, z, np.clip(z, low, high))
    return np.where(cand, z, 0.0).astype(np.float32)
'''


def normalised(expr: str, norm: str, b: ProgramBuilder, renderer: int = RENDERER) -> str:
    """The expression of channel ``expr`` under ``norm`` (a gene of ``genome.NORMALISATIONS``).

    Args:
        expr: the channel's expression.
        norm: the normalisation.
        b: the program being built.
        renderer: the renderer's version (:data:`RENDERERS`); only ``minmax`` renders
            differently across versions.

    Raises:
        ValueError: on an unknown normalisation or renderer version.

    """
    if renderer not in RENDERERS:
        raise ValueError(f"unknown renderer version {renderer!r}; versions: {RENDERERS}")
    if norm == "none":
        return expr
    if norm == "row":
        b.need("scores", "zscore_rows")
        return f"zscore_rows({expr}, mask)"
    if norm == "col":
        b.need("scores", "zscore_cols")
        return f"zscore_cols({expr}, mask)"
    if norm == "both":
        b.need("scores", "zscore_rows", "zscore_cols")
        return f"zscore_rows(zscore_cols({expr}, mask), mask)"
    if norm == "minmax" and renderer == 1:
        b.need("scores", "ZSCORE_EPS")
        b.helpers["_minmax_rows"] = MINMAX_HELPER_V1
        return f"_minmax_rows({expr}, mask)"
    if norm == "minmax":
        b.need("scores", "minmax_rows")
        return f"minmax_rows({expr}, mask)"
    if norm == "local":
        b.need("scores", "ZSCORE_EPS", "top_k_indices")
        b.constant("LOCAL_K")
        b.helpers["_local_zscore"] = LOCAL_HELPER
        return f"_local_zscore({expr}, S, mask)"
    raise ValueError(f"unknown normalisation {norm!r}")
