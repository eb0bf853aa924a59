"""P0, the cosine baseline (§3.1): returns ``S`` unchanged and spends no test-time compute."""

from __future__ import annotations

from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.recipe import Recipe


class P0:
    """The trivial program: the cosine matrix as it is (returned as a copy, inputs untouched)."""

    name = "P0"
    recipe = Recipe()

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """Return a copy of ``S``."""
        out: Matrix = S.copy()
        return out
