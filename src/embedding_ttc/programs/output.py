"""The check every program's output passes: a finite ``float`` matrix of the expected shape.

The evaluation applies it to an in-process program's return value, the sandbox to what its
child sends back, and a deployed index to every call it serves; a failure is a
:class:`ProgramOutputError`, whose status is ``invalid_output``.
"""

from __future__ import annotations

import numpy as np

from embedding_ttc.programs.base import Matrix
from embedding_ttc.programs.outcome import CandidateError, Status


class ProgramOutputError(CandidateError):
    """A program returned something other than a finite |Q|×|D| float matrix."""

    def __init__(self, reason: str) -> None:
        super().__init__(Status.INVALID_OUTPUT, reason)
        self.args = (reason,)  # the message a user reads is the reason alone


def check_output(out: object, shape: tuple[int, int], name: str) -> Matrix:
    """Return ``out`` as a float32 matrix if it is a finite array of ``shape``, else raise."""
    if not isinstance(out, np.ndarray):
        raise ProgramOutputError(f"program {name} returned {type(out).__name__}, not an array")
    if out.shape != shape:
        raise ProgramOutputError(f"program {name} returned shape {out.shape}, expected {shape}")
    if not np.issubdtype(out.dtype, np.number):
        raise ProgramOutputError(f"program {name} returned dtype {out.dtype}")
    if not np.all(np.isfinite(out)):
        raise ProgramOutputError(f"program {name} returned non-finite scores")
    return out.astype(np.float32, copy=False)
