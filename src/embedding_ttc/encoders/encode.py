"""Encoding many texts through any encoder: in chunks, longest first, with progress.

The evaluation's base stage, a deployed index's build and the probes that encode a caller's
texts all encode this way, so that a progress bar moves and padding stays low.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from embedding_ttc.encoders.base import Embeddings, Encoder

Progress = Callable[[int], None]
"""Called with the number of texts just encoded (for progress bars)."""

ENCODE_CHUNK = 256
"""Texts per ``encoder.encode`` call."""


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
