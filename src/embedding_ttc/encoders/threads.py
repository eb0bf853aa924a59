"""Torch's intra-op threads: read and set in one place, a no-op where torch is not installed.

The thread count is part of what an encoder computes, not only of how fast: a matrix product
of a few rows can round differently with one thread than with two (MKL on an Intel Xeon), so
the sharded build runs its tasks with the driver's count
(:mod:`~embedding_ttc.encoders.sharded`). A busy host also thrashes with many threads per
process, which is why the serving workers and the deploy commands take ``--threads``.
"""

from __future__ import annotations


def torch_threads() -> int | None:
    """Torch's intra-op threads in this process, ``None`` when torch is not installed."""
    try:
        import torch
    except ImportError:
        return None
    return int(torch.get_num_threads())


def set_torch_threads(n: int | None) -> None:
    """Set torch's intra-op threads to ``n`` (``None``: leave them; no torch: nothing to do).

    Raises:
        ValueError: ``n`` is below 1.

    """
    if n is None:
        return
    if n < 1:
        raise ValueError(f"threads is at least 1, got {n}")
    try:
        import torch
    except ImportError:
        return
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)
