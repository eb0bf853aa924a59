"""Honest fakes for tests: deterministic, seeded, and named as fakes.

``HashingEncoder`` is a bag-of-words random-projection encoder: each lower-cased word maps to a
fixed random vector seeded by its hash, and a text is the sum of its words. It is NOT a language
model; it exists so algebra and plumbing tests run in milliseconds with texts that share words
landing close together.
"""

from __future__ import annotations

import hashlib

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.encoders.base import (
    PASSAGE,
    BaseEncoder,
    EncoderInfo,
    ViewSpec,
    shared_views,
)


class HashingEncoder(BaseEncoder):
    """A seeded bag-of-words random projection (a fake encoder, for tests only)."""

    def __init__(self, dim: int = 32, two_views: bool = False, seed: int = 0) -> None:
        views = shared_views()
        if two_views:
            views = {v: ViewSpec("prompt", "query: ") for v in views}  # e5-style
            views[PASSAGE] = ViewSpec("prompt", "passage: ")
        self.info = EncoderInfo(
            name="fake-hashing",
            family="fake",
            model_id="fake/hashing",
            revision=f"seed={seed}",
            dim=dim,
            views=views,
            max_length=64,
        )
        self.seed = seed
        self.calls: list[int] = []  # number of texts per _embed call

    def _word(self, word: str) -> NDArray[np.float64]:
        h = int.from_bytes(hashlib.sha256(f"{self.seed}:{word}".encode()).digest()[:8], "little")
        return np.random.default_rng(h).standard_normal(self.info.dim)

    def _embed(
        self, texts: list[str], *, adapter: str | None, max_length: int | None
    ) -> NDArray[np.floating]:
        self.calls.append(len(texts))
        out = np.zeros((len(texts), self.info.dim))
        for i, text in enumerate(texts):
            words = text.lower().split()[: max_length or self.info.max_length]
            for w in words:
                out[i] += self._word(w.strip(".,;:!?"))
        return out
