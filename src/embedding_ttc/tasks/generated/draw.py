"""Seeded draws that stay the same across Python versions (the generated tasks' only randomness)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


class Draw:
    """Seeded draws built on ``Random.random()`` alone, so they stay stable across Pythons."""

    def __init__(self, seed: str) -> None:
        self._rng = random.Random(seed)

    def unit(self) -> float:
        """Uniform float in ``[0, 1)``."""
        return self._rng.random()

    def below(self, n: int) -> int:
        """Uniform integer in ``[0, n)``."""
        if n <= 0:
            raise ValueError("below() needs a positive bound")
        return min(int(self._rng.random() * n), n - 1)

    def choice(self, items: Sequence[T]) -> T:
        """One element of ``items``, uniformly."""
        return items[self.below(len(items))]

    def subset(self, n: int, k: int) -> list[int]:
        """``k`` distinct indices from ``range(n)``, sorted (partial Fisher-Yates)."""
        pool = list(range(n))
        for i in range(k):
            j = i + self.below(n - i)
            pool[i], pool[j] = pool[j], pool[i]
        return sorted(pool[:k])
