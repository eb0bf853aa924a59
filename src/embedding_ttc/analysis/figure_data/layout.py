"""A 2-D layout of vectors: seeded UMAP from a few points, PCA below that or without umap-learn."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from embedding_ttc.errors import install_hint

MIN_UMAP_POINTS = 5
"""Fewer programs than this are laid out by PCA: UMAP's neighbour graph needs a few points."""


@dataclass(frozen=True)
class Layout2D:
    """2-D coordinates of a set of vectors and how they were obtained."""

    coords: tuple[tuple[float, float], ...]
    method: Literal["umap", "pca"]
    note: str


def pca_2d(vectors: Sequence[Sequence[float]]) -> tuple[tuple[float, float], ...]:
    """The first two principal-component scores of ``vectors`` (Pearson 1901).

    Signs are fixed so that each component's largest-magnitude loading is positive, which makes
    the layout a function of the data alone. Missing components (fewer points or dimensions than
    two, or a constant set) are zeros.
    """
    x = np.asarray(vectors, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] == 0:
        return ()
    centred = x - x.mean(axis=0, keepdims=True)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    scores = np.zeros((x.shape[0], 2))
    for k in range(min(2, vt.shape[0])):
        axis = vt[k]
        if np.allclose(centred @ axis, 0.0):
            continue
        axis = axis if axis[np.argmax(np.abs(axis))] > 0 else -axis
        scores[:, k] = centred @ axis
    return tuple((float(a), float(b)) for a, b in scores)


def umap_2d(vectors: Sequence[Sequence[float]], seed: int) -> tuple[tuple[float, float], ...]:
    """A seeded UMAP layout (McInnes et al. 2018); raises ImportError without umap-learn.

    ``random_state`` makes UMAP single-threaded and the layout reproducible; the random
    initialisation avoids the spectral one, which fails on the tiny graphs of short searches.
    """
    import umap  # the report extra; imported here because it is slow to import

    x = np.asarray(vectors, dtype=np.float64)
    reducer = umap.UMAP(
        n_components=2,
        n_neighbors=max(2, min(15, x.shape[0] - 1)),
        min_dist=0.3,
        init="random",
        random_state=seed,
    )
    with warnings.catch_warnings():  # "n_jobs overridden by random_state": wanted here
        warnings.simplefilter("ignore", UserWarning)
        out = reducer.fit_transform(x)
    return tuple((float(a), float(b)) for a, b in out)


def layout_2d(vectors: Sequence[Sequence[float]], *, seed: int = 0) -> Layout2D:
    """Lay ``vectors`` out in 2-D: UMAP from :data:`MIN_UMAP_POINTS` points, else PCA."""
    n = len(vectors)
    if n < MIN_UMAP_POINTS:
        reason = f"PCA: {n} programs, UMAP needs at least {MIN_UMAP_POINTS}"
        return Layout2D(pca_2d(vectors), "pca", reason)
    try:
        coords = umap_2d(vectors, seed)
    except ImportError:
        reason = f"PCA: umap-learn is not installed ({install_hint('report')} for the UMAP layout)"
        return Layout2D(pca_2d(vectors), "pca", reason)
    return Layout2D(coords, "umap", f"UMAP, seed {seed}")
